//! Timed replay (`run.mode = "timed"`): each request through the counts engine, then its NAND
//! operations placed in time by the clock (`crate::timed`).

use super::replay::Sim;
use super::source::At;
use crate::error::Result;
use crate::request::{Op, Request};
use crate::timed::{Clock, Served};

impl Sim {
    /// One request: issued by the host queue, simulated as in counts mode, then timed;
    /// its latency is recorded if `measured`.
    #[inline(always)]
    pub(super) fn timed_request(
        &mut self,
        clock: &mut Clock,
        req: &Request,
        at: At,
        measured: bool,
    ) -> Result<()> {
        let t = clock.issue(req.time_us);
        let (written, hits) = (self.be.host.write_pages, self.be.host.read_hit_pages);
        self.request(req, at)?;
        let ops_end = clock.run_ops(t, self.be.nand.log());
        self.be.nand.clear_log();
        let dram_pages = match req.op {
            Op::Write => self.be.host.write_pages - written,
            Op::Read => self.be.host.read_hit_pages - hits,
            Op::Trim => 0,
        };
        let served = Served {
            op: req.op,
            dram_pages,
            bytes: req.len_bytes,
        };
        clock.finish(served, t, ops_end, measured);
        Ok(())
    }
}
