//! Timed replay (`run.mode = "timed"`): each request through the counts engine, then its NAND
//! operations placed in time by the clock (`crate::timed`).
//!
//! With `run.scheduler = "fifo"` the controller takes every request the moment the host submits
//! it. The other schedulers model seed 004's host interface (§III-B): submitted requests wait in
//! the interface's queue, and the controller takes them, reads first:
//! - when the write at the head of the queue must flush the buffer (its pages would take the
//!   buffer past its capacity; hits are not discounted), writes are held back (`write_stop`)
//!   while reads are taken as they come, until no read is in the device (queued or in service):
//!   in a closed loop, until the queue holds only writes;
//! - then that write is taken, and the held writes after it in order;
//! - `write-stop` (the seed): the flushing write is synchronous: the controller takes nothing
//!   more until it has completed; `read-priority`: the same hold, without the stall.
//!
//! A request's latency runs from its submission, so time waiting in the queue counts. Requests
//! are simulated in the order they are taken, so counts may differ from counts mode
//! (`queue.out_of_order` says how many were reordered).

use super::readahead::Records;
use super::sim::Sim;
use super::source::At;
use crate::error::{Result, SimError};
use crate::nand::NandOp;
use crate::request::{Op, Request};
use crate::timed::latency::Latencies;
use crate::timed::{Clock, Served};
use crate::units::PageSpan;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

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
        self.idle_work(clock, t, measured)?;
        let (served, ops_end) = self.serve_timed(clock, req, at, t, measured)?;
        clock.finish(served, t, ops_end, measured);
        Ok(())
    }

    /// What ran while the device was idle before a request taken at `t`: background draining,
    /// and background GC (`ftl.background_gc`), a victim at a time, until it had nothing to do
    /// or the request came.
    #[inline(always)]
    fn idle_work(&mut self, clock: &mut Clock, t: f64, measured: bool) -> Result<()> {
        if let Some(start) = clock.drain_window(t) {
            self.drain_idle(clock, start, t, measured)?;
        }
        if let Some(mut at_us) = clock.idle_window(t) {
            while at_us < t && self.be.ftl.background_gc(&mut self.be.nand)? {
                at_us = clock.background(at_us, self.be.nand.log());
                self.be.nand.clear_log();
            }
        }
        Ok(())
    }

    /// The device was idle from `start` to the request issued at `t`: the buffer drained (module
    /// docs of `crate::timed::drain`), up to one flush per die at a time, until empty or `t`.
    #[cold]
    fn drain_idle(&mut self, clock: &mut Clock, start: f64, t: f64, measured: bool) -> Result<()> {
        // Completion times of the flushes in progress (as bits: times are ≥ 0), earliest first.
        let mut slots: BinaryHeap<Reverse<u64>> =
            std::iter::repeat_n(Reverse(start.to_bits()), clock.drain.width).collect();
        while let Some(Reverse(at)) = slots.pop() {
            let at = f64::from_bits(at);
            if at >= t {
                break;
            }
            let Some(end) = self.drain_one(clock, at, measured)? else {
                break;
            };
            slots.push(Reverse(end.to_bits()));
        }
        Ok(())
    }

    /// Flush the buffer policy's next victim in the background from `at`: when its operations
    /// complete (None: nothing to flush).
    fn drain_one(&mut self, clock: &mut Clock, at: f64, measured: bool) -> Result<Option<f64>> {
        let Some(pages) = self.drain_victim()? else {
            return Ok(None);
        };
        let end = clock.drained(at, self.be.nand.log(), pages, measured);
        self.be.nand.clear_log();
        Ok(Some(end))
    }

    /// Flush the buffer policy's next victim (its operations go to the log): the pages that left
    /// the buffer (None: nothing to flush).
    fn drain_victim(&mut self) -> Result<Option<u64>> {
        let before = self.be.host.flushed_pages;
        if self.buffer.pages() == 0 || !self.buffer.drain_one(&mut self.be)? {
            return Ok(None);
        }
        Ok(Some(self.be.host.flushed_pages - before))
    }

    /// Simulate `req` and place its operations from `t`: what it did, and when they end.
    #[inline(always)]
    fn serve_timed(
        &mut self,
        clock: &mut Clock,
        req: &Request,
        at: At,
        t: f64,
        measured: bool,
    ) -> Result<(Served, f64)> {
        let c = self.count(req, at, measured)?;
        let ra = &mut self.be.readahead.records;
        let placed = c.place(clock, t, self.be.nand.log(), &self.drains, ra);
        self.be.nand.clear_log();
        self.drains.clear();
        Ok(placed)
    }

    /// Simulate `req` as in counts mode, then drain the buffer back to the watermark if it is
    /// above it: what the clock needs to place it. The request's operations are left in the
    /// log, followed by each drained flush's (their counts and pages appended to `drains`); what
    /// its read-ahead did is a record of the read-ahead's `records`.
    #[inline(always)]
    pub(super) fn count(&mut self, req: &Request, at: At, measured: bool) -> Result<Counted> {
        // Its operations and each drain's are placed apart: none waits for an earlier batch's.
        self.be.nand.new_batch();
        let logged = self.be.nand.log().len();
        let (written, hits) = (self.be.host.write_pages, self.be.host.read_hit_pages);
        let (flushed, held) = (self.be.host.flushed_pages, self.buffer.pages());
        self.request(req, at)?;
        let flushed = self.be.host.flushed_pages - flushed;
        // The buffer went from `held` to `now` pages: flushed ones left, others were dropped
        // (trims) or inserted.
        let now = self.buffer.pages();
        let ops = self.be.nand.log().len() - logged;
        let mut c = Counted {
            op: req.op,
            arrival_us: req.time_us,
            bytes: req.len_bytes,
            pages: self.request_pages(req),
            ops: ops as u32,
            dram_pages: match req.op {
                Op::Write => self.be.host.write_pages - written,
                Op::Read => self.be.host.read_hit_pages - hits,
                Op::Trim => 0,
            },
            flushed,
            inserted: (now + flushed).saturating_sub(held),
            dropped: held.saturating_sub(now + flushed),
            drains: 0,
            read_ahead: self.be.readahead.take_pending(),
            measured,
        };
        // Above the watermark: drain back to it, behind this request's operations.
        if let Some(target) = self.drain_to {
            while self.buffer.pages() > target {
                self.be.nand.new_batch();
                let logged = self.be.nand.log().len();
                let Some(pages) = self.drain_victim()? else {
                    break;
                };
                let ops = (self.be.nand.log().len() - logged) as u32;
                self.drains.push((ops, pages));
                c.drains += 1;
            }
        }
        Ok(c)
    }

    /// Pages of `req` (the controller's per-page work).
    #[inline]
    fn request_pages(&self, req: &Request) -> u64 {
        let shift = self.geo.sectors_per_page().trailing_zeros();
        PageSpan::new(req.offset_bytes, req.len_bytes, shift).pages()
    }

    /// Host-interface scheduling: the host submits `req`; the controller then takes what it may.
    pub(super) fn submit(
        &mut self,
        clock: &mut Clock,
        q: &mut Interface,
        req: &Request,
        at: At,
        measured: bool,
    ) -> Result<()> {
        let depth = clock.queue_depth();
        let submitted_us = if depth > 0 {
            // Closed loop: when a slot frees.
            loop {
                self.pump(clock, q)?;
                if q.in_device() < depth {
                    break q.now;
                }
                q.next_event()?;
            }
        } else {
            let mut s = clock.arrival(req.time_us);
            while q
                .in_service
                .peek()
                .is_some_and(|Reverse(key)| f64::from_bits((key >> 64) as u64) <= s)
            {
                q.next_event()?;
                self.pump(clock, q)?;
            }
            // `run.max_inflight`: the host waits for a completion while every slot is taken.
            let cap = clock.max_inflight();
            while cap > 0 && q.in_device() >= cap {
                q.next_event()?;
                self.pump(clock, q)?;
                s = s.max(q.now);
            }
            q.now = q.now.max(s);
            s
        };
        q.enqueue(*req, at, submitted_us, measured, 0);
        clock.submitted(submitted_us, q.in_device());
        self.pump(clock, q)
    }

    /// Take every request the scheduler allows now (module docs).
    pub(super) fn pump(&mut self, clock: &mut Clock, q: &mut Interface) -> Result<()> {
        if q.fifo {
            while let Some(p) = q.pop_oldest() {
                self.take(clock, q, p, false)?;
            }
            return Ok(());
        }
        while q.now >= q.stalled_until {
            if let Some(p) = q.reads.pop_front() {
                self.take(clock, q, p, false)?;
                continue;
            }
            let Some(w) = q.writes.front() else { break };
            if !q.stop {
                if w.req.op == Op::Write && self.must_flush(&w.req) {
                    q.stop = true;
                    clock.interface.get_or_insert_default().write_stops += 1;
                } else {
                    let p = q.writes.pop_front().expect("a queued write");
                    self.take(clock, q, p, false)?;
                    continue;
                }
            }
            if q.reads_in_service > 0 {
                break;
            }
            let p = q.writes.pop_front().expect("a queued write");
            q.stop = false;
            let sync = q.write_stop;
            self.take(clock, q, p, sync)?;
        }
        Ok(())
    }

    /// Would this write take the buffer past its capacity (and so flush first)?
    fn must_flush(&self, req: &Request) -> bool {
        self.buffer.pages() + self.request_pages(req) > self.buffer_pages
    }

    /// The controller takes `p` now; `sync`: it waits for `p` to complete.
    fn take(&mut self, clock: &mut Clock, q: &mut Interface, p: Pending, sync: bool) -> Result<()> {
        let t = q.now;
        let other = match p.req.op {
            Op::Read => q.writes.front(),
            _ => q.reads.front(),
        };
        if other.is_some_and(|o| o.seq < p.seq) {
            clock.interface.get_or_insert_default().out_of_order += 1;
        }
        clock.take(t, p.flow as usize);
        self.use_flow_map(p.flow as usize);
        if q.fifo {
            self.idle_work(clock, t, p.measured)?;
        }
        // Several flows: what this request makes the NAND do is its flow's.
        let flows = !q.stats.is_empty() && p.measured;
        let before = flows.then(|| {
            let b = &self.be;
            (b.nand.counters.programs_total(), b.host.write_pages)
        });
        let (served, ops_end) = self.serve_timed(clock, &p.req, p.at, t, p.measured)?;
        let done = clock.completion(served, t, ops_end);
        let caused = before.map(|(programs, written)| {
            let b = &self.be;
            let programs = b.nand.counters.programs_total() - programs;
            (programs, b.host.write_pages - written)
        });
        let done_rec = Done {
            req: p.req,
            served,
            submitted_us: p.submitted_us,
            done_us: done,
            measured: p.measured,
            flow: p.flow,
            caused,
        };
        if q.host {
            // Recorded when its thread has seen it complete ([`Interface::seen`]).
            clock.busy_to(done);
            q.completed.insert(p.seq, done_rec);
        } else {
            done_rec.record(clock, &mut q.stats, done);
        }
        let read = p.req.op == Op::Read;
        q.in_service
            .push(Reverse(completion_key(done, read, p.seq, p.flow)));
        q.reads_in_service += read as usize;
        if sync {
            q.stalled_until = done;
            clock.interface.get_or_insert_default().stalled_us += done - t;
        }
        Ok(())
    }

    /// Take everything still queued (the end of a pass).
    pub(super) fn drain(&mut self, clock: &mut Clock, q: &mut Interface) -> Result<()> {
        loop {
            self.pump(clock, q)?;
            if q.reads.is_empty() && q.writes.is_empty() {
                return Ok(());
            }
            q.next_event()?;
        }
    }
}

/// Flows a key holds (`[[flows]]` allows fewer: its index is below this).
const FLOW_MASK: u32 = (1 << 15) - 1;

/// A request in service as one number, ordered by completion time (as bits: times are ≥ 0),
/// writes before reads completing together, then by submission order (the older first: no flow
/// is favoured); its flow in the low bits.
#[inline]
fn completion_key(done_us: f64, read: bool, seq: u64, flow: u32) -> u128 {
    let rest = (read as u64) << 63 | (seq & ((1 << 48) - 1)) << 15 | (flow & FLOW_MASK) as u64;
    ((done_us.to_bits() as u128) << 64) | rest as u128
}

/// A request the device has served, to be recorded when its host sees it complete.
struct Done {
    req: Request,
    served: Served,
    submitted_us: f64,
    done_us: f64,
    measured: bool,
    flow: u32,
    /// Several flows, measured: the NAND programs it caused and the pages it wrote.
    caused: Option<(u64, u64)>,
}

impl Done {
    /// Record its latency, from its submission to `seen_us` (its completion as its host saw it).
    /// Inline: without the host model it runs for every request, straight after it is built.
    #[inline(always)]
    fn record(self, clock: &mut Clock, stats: &mut [FlowStats], seen_us: f64) {
        clock.record_seen(
            self.served,
            self.submitted_us,
            self.done_us,
            seen_us,
            self.measured,
        );
        if let Some((programs, written)) = self.caused {
            stats[self.flow as usize].record(
                &self.req,
                self.submitted_us,
                seen_us,
                programs,
                written,
            );
        }
    }
}

/// A submitted request not yet taken.
struct Pending {
    req: Request,
    at: At,
    submitted_us: f64,
    measured: bool,
    /// Submission order.
    seq: u64,
    /// Its flow (`[[flows]]`; 0 with one).
    flow: u32,
}

/// The host interface's queue and the controller's state (module docs).
pub(super) struct Interface {
    /// `fifo`: everything is taken as it comes (several flows' fetched commands).
    fifo: bool,
    /// `write-stop` (else `read-priority`).
    write_stop: bool,
    /// Submitted, not yet taken: reads; writes and trims; each in submission order.
    reads: VecDeque<Pending>,
    writes: VecDeque<Pending>,
    /// The requests taken and not yet completed ([`completion_key`]).
    in_service: BinaryHeap<Reverse<u128>>,
    reads_in_service: usize,
    /// Writes are held back: the one at the head of the queue must flush the buffer.
    stop: bool,
    /// write-stop: the controller waits for a synchronous flush until then.
    stalled_until: f64,
    /// The time of the last event (a submission or a completion).
    pub(super) now: f64,
    submitted: u64,
    /// Each flow's measured requests (`[[flows]]`; empty with one).
    pub(super) stats: Vec<FlowStats>,
    /// The host model is on (`host.cpu_us`, `host.wake_us`): a request's latency is recorded
    /// when its thread sees it complete; until then it waits in `completed` by submission order
    /// (Fx-hashed: one insert and one removal per request, keyed by our own sequence numbers).
    pub(super) host: bool,
    completed: rustc_hash::FxHashMap<u64, Done>,
    /// The submission order of the request [`Interface::next_event`] completed last.
    last_seq: u64,
}

impl Interface {
    /// The queue of `run.scheduler` (None: "fifo", no queue).
    pub(super) fn new(scheduler: &str) -> Option<Interface> {
        (scheduler != "fifo").then(|| Interface::of(scheduler, 0))
    }

    /// The queue of `run.scheduler` for `flows` flows (fetched commands; "fifo" included).
    pub(super) fn of(scheduler: &str, flows: usize) -> Interface {
        Interface {
            fifo: scheduler == "fifo",
            write_stop: scheduler == "write-stop",
            reads: VecDeque::new(),
            writes: VecDeque::new(),
            in_service: BinaryHeap::new(),
            reads_in_service: 0,
            stop: false,
            stalled_until: 0.0,
            now: 0.0,
            submitted: 0,
            stats: (0..flows).map(|_| FlowStats::default()).collect(),
            host: false,
            completed: rustc_hash::FxHashMap::default(),
            last_seq: 0,
        }
    }

    /// A request of flow `flow` submitted at `submitted_us` joins the queue.
    pub(super) fn enqueue(
        &mut self,
        req: Request,
        at: At,
        submitted_us: f64,
        measured: bool,
        flow: u32,
    ) {
        let p = Pending {
            req,
            at,
            submitted_us,
            measured,
            seq: self.submitted,
            flow,
        };
        self.submitted += 1;
        match req.op {
            Op::Read => self.reads.push_back(p),
            _ => self.writes.push_back(p),
        }
    }

    /// The request submitted first of those queued.
    fn pop_oldest(&mut self) -> Option<Pending> {
        match (self.reads.front(), self.writes.front()) {
            (Some(r), Some(w)) if w.seq < r.seq => self.writes.pop_front(),
            (Some(_), _) => self.reads.pop_front(),
            _ => self.writes.pop_front(),
        }
    }

    /// Requests in the device: queued or in service.
    pub(super) fn in_device(&self) -> usize {
        self.reads.len() + self.writes.len() + self.in_service.len()
    }

    /// When the next request in service completes.
    pub(super) fn next_completion(&self) -> Option<f64> {
        self.in_service
            .peek()
            .map(|Reverse(key)| f64::from_bits((key >> 64) as u64))
    }

    /// Advance to the next completion: its flow.
    pub(super) fn next_event(&mut self) -> Result<u32> {
        let Some(Reverse(key)) = self.in_service.pop() else {
            return Err(SimError::Integrity(
                "the host interface's queue holds requests but none is in service".into(),
            ));
        };
        let (t, read) = ((key >> 64) as u64, (key >> 63) & 1 == 1);
        let flow = (key as u32) & FLOW_MASK;
        self.now = self.now.max(f64::from_bits(t));
        self.reads_in_service -= read as usize;
        self.last_seq = (key as u64 >> 15) & ((1 << 48) - 1);
        Ok(flow)
    }

    /// The host model: the request [`Interface::next_event`] completed last was seen by its
    /// thread at `seen_us`; record it.
    pub(super) fn seen(&mut self, clock: &mut Clock, seen_us: f64, woke: bool) -> Result<()> {
        let Some(d) = self.completed.remove(&self.last_seq) else {
            return Err(SimError::Integrity(format!(
                "request {} completed but was never taken",
                self.last_seq
            )));
        };
        let (flow, measured) = (d.flow as usize, d.caused.is_some());
        d.record(clock, &mut self.stats, seen_us);
        if woke && measured {
            self.stats[flow].wakes += 1;
        }
        Ok(())
    }
}

/// What the counts engine did for one request, for the clock to place it in time
/// ([`Sim::count`]).
#[derive(Clone, Copy, Debug)]
pub(super) struct Counted {
    op: Op,
    /// The request's arrival by its trace or generator.
    pub(super) arrival_us: f64,
    bytes: u64,
    /// Pages of the request (the controller's per-page work).
    pages: u64,
    /// Its operations in the log.
    pub(super) ops: u32,
    /// Pages served in DRAM (written to the buffer, or read hits; the read-ahead's hits are its
    /// record's).
    dram_pages: u64,
    /// Pages that left the buffer, were put in it, were dropped from it (trims).
    flushed: u64,
    inserted: u64,
    dropped: u64,
    /// Watermark drains that followed it.
    pub(super) drains: u32,
    /// It hit the read-ahead cache or read ahead: the next of the read-ahead's records is its own.
    pub(super) read_ahead: bool,
    pub(super) measured: bool,
}

impl Counted {
    /// Place the request, taken at `t`, in time: its operations (the first `self.ops` of `ops`)
    /// from when the controller has handled it, then its watermark drains' (the rest of `ops`,
    /// split as `drains` says), then its read-ahead (the next of `read_ahead`'s records). What it
    /// did, and when its own operations end.
    #[inline(always)]
    pub(super) fn place(
        &self,
        clock: &mut Clock,
        t: f64,
        ops: &[NandOp],
        drains: &[(u32, u64)],
        read_ahead: &mut Records,
    ) -> (Served, f64) {
        let ready_us = clock.command(t, self.op == Op::Write, || self.pages);
        let (own, mut rest) = ops.split_at(self.ops as usize);
        let ops_end = clock.run_ops(ready_us, own);
        let room_us = if self.flushed + self.inserted + self.dropped > 0 {
            clock.buffer_room(
                t,
                ready_us,
                self.flushed,
                self.dropped,
                self.inserted,
                ops_end,
            )
        } else {
            0.0
        };
        for &(n, pages) in drains {
            let (drained, after) = rest.split_at(n as usize);
            clock.drained(ready_us, drained, pages, self.measured);
            rest = after;
        }
        let mut served = Served {
            op: self.op,
            dram_pages: self.dram_pages,
            bytes: self.bytes,
            ready_us,
            room_us,
            read_ahead_us: 0.0,
        };
        if self.read_ahead {
            read_ahead.place_next(clock, &mut served);
        }
        (served, ops_end)
    }
}

/// One flow's measured requests.
#[derive(Clone, Debug, Default)]
pub(super) struct FlowStats {
    pub(super) read: Latencies,
    pub(super) write: Latencies,
    pub(super) trim: Latencies,
    /// Every request's: exact sum and maximum (the histogram is the three above merged).
    pub(super) all_sum_us: f64,
    pub(super) all_max_us: f64,
    pub(super) requests: u64,
    pub(super) bytes: u64,
    /// Its first measured submission and its last completion.
    pub(super) first_us: Option<f64>,
    pub(super) last_us: f64,
    /// NAND programs made while its requests were served (their flushes, GC, merges), and the
    /// pages it wrote.
    pub(super) programs: u64,
    pub(super) written_pages: u64,
    /// Of its measured completions, those its thread slept before and woke for (host model).
    pub(super) wakes: u64,
}

impl FlowStats {
    pub(super) fn record(
        &mut self,
        req: &Request,
        submitted_us: f64,
        done_us: f64,
        programs: u64,
        written_pages: u64,
    ) {
        let lat = done_us - submitted_us;
        match req.op {
            Op::Read => self.read.record(lat),
            Op::Write => self.write.record(lat),
            Op::Trim => self.trim.record(lat),
        }
        self.all_sum_us += lat;
        self.all_max_us = self.all_max_us.max(lat);
        self.requests += 1;
        self.bytes += req.len_bytes;
        self.first_us.get_or_insert(submitted_us);
        self.last_us = self.last_us.max(done_us);
        self.programs += programs;
        self.written_pages += written_pages;
    }
}
