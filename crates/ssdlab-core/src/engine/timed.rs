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
        // The device was idle before this request: background GC (`ftl.background_gc`) ran,
        // a victim at a time, until it had nothing to do or the request arrived.
        if let Some(mut at_us) = clock.idle_window(t) {
            while at_us < t && self.be.ftl.background_gc(&mut self.be.nand)? {
                at_us = clock.background(at_us, self.be.nand.log());
                self.be.nand.clear_log();
            }
        }
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
