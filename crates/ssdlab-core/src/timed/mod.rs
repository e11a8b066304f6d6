//! Timed mode (`run.mode = "timed"`): a clock over the counts engine.
//!
//! The functional simulation is the counts engine's, request by request in issue order, so every
//! count is what counts mode gives (background draining aside: it flushes at times of its own).
//! Each request's NAND operations (logged with their addresses by [`crate::nand::Nand`]) are then
//! placed in time on the dies and channels ([`layout`], [`scheduler`]):
//! - the host queue issues a request when a slot of the closed loop frees (`run.queue_depth`
//!   outstanding requests) or at its arrival time (open loop, `run.queue_depth = 0`), but not
//!   before one of `run.max_inflight` outstanding requests completes when that many are;
//! - the controller ([`controller`], `controller.cores` > 0) handles the command on its earliest
//!   free core (`command_us` + `page_us` per page) from the issue; the request's NAND operations
//!   are ready then (its issue without a controller);
//! - within a request, an operation is ready when the controller is done and the operation it
//!   depends on, if any, has completed: the FTL names it as it issues the operation
//!   ([`NandOp::after`], [`crate::nand::Mark`]). A data read waits for the map read that located it
//!   (a CMT miss), a map read for the write-back of the dirty victim whose slot it takes, a copy's
//!   program (GC, merge, padding, read-modify-write, a translation page's write-back) for its
//!   read; other operations (host programs from the buffer, reads that hit the CMT) wait for
//!   nothing, so independent operations overlap on different dies. An erase waits for every
//!   operation before it in the request, and everything after it waits for the erase (the
//!   foreground GC that frees the block comes first);
//! - a write's data crosses the host link (`host.link_mib_s`, one timeline shared by both
//!   directions) once the controller is done, then is copied to the buffer's DRAM
//!   (`nand.dram_us` per page); the write completes when that is done, its pages have slots in
//!   the buffer and every operation it caused (flushes, GC, merges) has completed; a flushed
//!   page's slot frees when its program completes, or as it is evicted (`buffer.release`);
//! - a read completes when every page is served, from DRAM (a buffer hit, or a read-ahead hit
//!   once its page's read-ahead has completed, [`readahead`]) or from flash, and its data has
//!   crossed the link; a trim when the controller is done with it;
//! - background work (GC, [`drain`]ing of the buffer, read-ahead) occupies dies and channels from
//!   when it starts; a request waits for it only when its operations queue behind it.
//!
//! Operations of different requests meet only on the timelines: a die or channel serves them in
//! the order they become ready (the `fifo` scheduler).
//!
//! NAND mechanisms, each off by default (docs/config.md, "Timed mode"): multi-plane operations,
//! NAND pages of several mapping units and MLC/TLC page types ([`group`]: a request's operations
//! that share one array operation), and program/erase suspension for reads ([`suspend`], a
//! scheduler that replaces `fifo` when `nand.suspend` ≠ "none").

pub mod controller;
pub mod drain;
mod group;
pub mod latency;
pub mod layout;
pub mod power;
pub mod readahead;
pub mod scheduler;
pub mod suspend;
pub mod timeline;

use crate::config::Config;
use crate::nand::{Cause, NandOp, OpKind, AFTER_ALL};
use crate::request::Op;
use crate::rng::Rng;
use crate::units::At;
use controller::{Controller, Link};
use drain::Drain;
use latency::Latencies;
use layout::Layout;
use scheduler::{Placed, Resources, Scheduler};
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

/// Array service times: the configured means, fixed or drawn exponentially.
struct Service {
    read_us: f64,
    program_us: f64,
    erase_us: f64,
    /// (read, program) times of each page type (`nand.cell`): page row r has type r mod len.
    types: Vec<(f64, f64)>,
    exponential: bool,
    rng: Rng,
}

impl Service {
    #[inline]
    fn draw(&mut self, kind: OpKind) -> f64 {
        let mean = match kind {
            OpKind::Read => self.read_us,
            OpKind::Program => self.program_us,
            OpKind::Erase => self.erase_us,
        };
        self.sample(mean)
    }

    /// The array time of `kind` on a page of row `row` in its block (its page type).
    fn draw_at(&mut self, kind: OpKind, row: u32) -> f64 {
        let (read, program) = self.types[row as usize % self.types.len()];
        self.sample(match kind {
            OpKind::Read => read,
            OpKind::Program => program,
            OpKind::Erase => self.erase_us,
        })
    }

    #[inline]
    fn sample(&mut self, mean: f64) -> f64 {
        if self.exponential {
            self.rng.exp(mean)
        } else {
            mean
        }
    }
}

/// When the operation that op `i` waits for ([`NandOp::after`]: that many places back) completed, by
/// `done` (the completions of the ops before `i`; `end`: the latest of them): −∞ without one, or
/// when it is before this batch.
#[inline]
fn predecessor(done: &[f64], i: usize, after: u16, end: f64) -> f64 {
    match after {
        0 => f64::NEG_INFINITY,
        k if k as usize > i => f64::NEG_INFINITY,
        AFTER_ALL => end,
        k => done[i - k as usize],
    }
}

/// The host queue: when each request is issued, and how many are outstanding.
struct HostQueue {
    /// Closed loop: this many outstanding; 0 = open loop.
    depth: usize,
    /// Completion times of the requests in flight.
    in_flight: BinaryHeap<Reverse<At>>,
    last_issue: f64,
    max_in_flight: usize,
    /// Open loop: at most this many outstanding (`run.max_inflight`; 0 = no cap).
    cap: usize,
    /// Open loop: the arrivals on the clock.
    arrivals: Arrivals,
}

/// Open loop: a workload's arrival times on the clock, pass after pass, in submission order.
#[derive(Clone, Debug)]
pub struct Arrivals {
    time_scale: f64,
    /// The first arrival of the pass, and where the pass starts on the clock.
    pass_t0: Option<f64>,
    pass_offset: f64,
    /// The last arrival on the clock (the issue may be later, waiting for a cap).
    last_arrival: f64,
    /// Arrivals earlier than the one before (issued at that one's time instead).
    pub reordered: u64,
}

impl Arrivals {
    /// Arrival times scaled by `time_scale` (`run.time_scale`).
    pub fn new(time_scale: f64) -> Arrivals {
        Arrivals {
            time_scale,
            pass_t0: None,
            pass_offset: 0.0,
            last_arrival: 0.0,
            reordered: 0,
        }
    }

    /// When a request arriving at `arrival_us` (by its trace or generator) arrives on the
    /// clock: never before the one before it.
    #[inline]
    pub fn at(&mut self, arrival_us: f64) -> f64 {
        let t0 = *self.pass_t0.get_or_insert(arrival_us);
        let mut a = self.pass_offset + (arrival_us - t0) * self.time_scale;
        if a < self.last_arrival {
            self.reordered += 1;
            a = self.last_arrival;
        }
        self.last_arrival = a;
        a
    }

    /// A new pass over the workload: its arrivals continue from `from_us`.
    pub fn new_pass(&mut self, from_us: f64) {
        self.pass_t0 = None;
        self.pass_offset = from_us;
    }
}

impl HostQueue {
    #[inline]
    fn issue(&mut self, arrival_us: f64) -> f64 {
        let t = if self.depth > 0 {
            if self.in_flight.len() < self.depth {
                self.last_issue
            } else {
                let Reverse(At(t)) = self.in_flight.pop().expect("a full closed loop");
                t.max(self.last_issue)
            }
        } else {
            let a = self.arrivals.at(arrival_us);
            // In submission order: never before the request ahead of it.
            let mut t = a.max(self.last_issue);
            self.retire(t);
            if self.cap > 0 && self.in_flight.len() >= self.cap {
                // Every slot taken: the request waits for the earliest completion.
                let Reverse(At(c)) = self.in_flight.pop().expect("a full cap");
                t = t.max(c);
                self.retire(t);
            }
            t
        };
        self.last_issue = t;
        t
    }

    /// Forget the requests completed by `t`.
    #[inline]
    fn retire(&mut self, t: f64) {
        while self.in_flight.peek().is_some_and(|Reverse(At(c))| *c <= t) {
            self.in_flight.pop();
        }
    }

    #[inline]
    fn complete(&mut self, at_us: f64) {
        self.in_flight.push(Reverse(At(at_us)));
        self.max_in_flight = self.max_in_flight.max(self.in_flight.len());
    }
}

/// What one host request did, for its completion time.
#[derive(Clone, Copy, Debug)]
pub struct Served {
    pub op: Op,
    /// Pages moved between host and DRAM: written pages, read pages hit in the buffer.
    pub dram_pages: u64,
    pub bytes: u64,
    /// When the controller had handled the command ([`Clock::command`]; its issue without one).
    pub ready_us: f64,
    /// When the buffer had room for the pages the request put in it ([`Clock::buffer_room`]).
    pub room_us: f64,
    /// When the read-ahead pages it hit were in DRAM ([`Clock::read_ahead`]; 0 without any).
    pub read_ahead_us: f64,
}

/// The clock: host queue, dies and channels, and the latencies of the measured window.
pub struct Clock {
    layout: Layout,
    res: Resources,
    sched: Box<dyn Scheduler>,
    service: Service,
    transfer_us: f64,
    command_us: f64,
    dram_us: f64,
    host: HostQueue,
    read: Latencies,
    write: Latencies,
    all: Latencies,
    /// Latencies since the last time-series row (None: no time series, `run.sample_every` = 0).
    interval: Option<Latencies>,
    interval_start_us: f64,
    /// The measured window: its first issue, its last completion, busy time at its start.
    start_us: Option<f64>,
    end_us: f64,
    busy_at_start: (Vec<f64>, Vec<f64>),
    bytes: u64,
    requests: u64,
    /// When the last operation placed so far completes (requests and background GC).
    busy_until: f64,
    /// The buffer's slots: (time a slot frees, slots freeing then), earliest first. A page put
    /// in the buffer takes the earliest; a flushed page's slot frees when the request that
    /// flushed it has completed its operations (its data has left DRAM), or, with
    /// `buffer.release = "on-evict"`, as the page leaves the buffer ([`Clock::buffer_room`]).
    buffer_slots: BinaryHeap<Reverse<(At, u64)>>,
    /// `buffer.release = "on-evict"`: SSDsim's rule (insert2buffer frees the evicted sectors at
    /// once; only the evicting request waits for their write-back).
    release_on_evict: bool,
    /// `buffer.drain_mb_s`: µs the write path takes to retire one page from the buffer (0 =
    /// unlimited), and when it has retired every page flushed so far.
    drain_page_us: f64,
    drain_line_us: f64,
    /// `buffer.admission = "in-order"`: the last write's admission (its pages' slots), which
    /// the next write's cannot precede (None: earliest-slot).
    admitted_us: Option<f64>,
    /// `ftl.background_gc`: idle time before it starts (None: off).
    background_idle_us: Option<f64>,
    background_steps: u64,
    /// Host-interface scheduling (`run.scheduler` ≠ "fifo"): what it did.
    pub interface: Option<InterfaceStats>,
    /// The front end: firmware cores and host link, with their busy time at the window's start.
    controller: Controller,
    /// Idle power states (`controller.wake_us`; None: off).
    power: Option<power::Power>,
    link: Link,
    front_busy_at_start: (f64, f64),
    /// Background draining of the write buffer (`buffer.drain_*`).
    pub drain: Drain,
    /// Requests were placed in time on a thread of their own (`run.clock_thread`).
    pub threaded: bool,
    /// Multi-plane operations, NAND pages of several units or page types ([`group`]).
    grouped: Option<group::Groups>,
    /// Completion of each operation of the batch being placed (kept for its allocation).
    done: Vec<f64>,
    /// When each slot of the read-ahead cache has its page in DRAM ([`readahead`]).
    read_ahead_ready: Vec<f64>,
}

/// What a host-interface scheduler did (metrics `queue.*`, docs/metrics.md).
#[derive(Clone, Debug, Default)]
pub struct InterfaceStats {
    /// Times a write had to flush the buffer and writes were held back.
    pub write_stops: u64,
    /// write-stop: time the controller waited for synchronous flushes (µs).
    pub stalled_us: f64,
    /// Requests taken while one submitted before them still waited.
    pub out_of_order: u64,
}

impl Clock {
    /// The clock of `cfg`'s device and host queue, operations placed by `sched`.
    pub fn new(cfg: &Config, sched: Box<dyn Scheduler>) -> Clock {
        let n = &cfg.nand;
        let units = n.units_per_page(cfg.device.page_bytes.0);
        let layout = Layout::new(&cfg.device, cfg.device.pages_per_block, units);
        let res = Resources::new(layout.dies(), layout.channels());
        let types = n.page_type_times();
        let grouped = (units > 1 || cfg.device.planes_per_die > 1 || types.len() > 1)
            .then(group::Groups::default);
        let sched: Box<dyn Scheduler> = if n.suspend == "none" {
            sched
        } else {
            Box::new(suspend::Suspend::new(n, layout.dies()))
        };
        Clock {
            res,
            sched,
            service: Service {
                read_us: n.read_us,
                program_us: n.program_us,
                erase_us: n.erase_us,
                types,
                exponential: n.service == "exponential",
                rng: Rng::new(cfg.run.seed ^ 0x0005_E471_CE0F_7A11),
            },
            transfer_us: n.page_transfer_us(cfg.device.page_bytes.0),
            command_us: n.command_us,
            dram_us: n.dram_us,
            host: HostQueue {
                depth: cfg.run.queue_depth as usize,
                in_flight: BinaryHeap::new(),
                last_issue: 0.0,
                max_in_flight: 0,
                cap: cfg.run.max_inflight as usize,
                arrivals: Arrivals::new(cfg.run.time_scale),
            },
            read: Latencies::default(),
            write: Latencies::default(),
            all: Latencies::default(),
            interval: (cfg.run.sample_every > 0).then(Latencies::default),
            interval_start_us: 0.0,
            start_us: None,
            end_us: 0.0,
            busy_at_start: (Vec::new(), Vec::new()),
            bytes: 0,
            requests: 0,
            busy_until: 0.0,
            background_idle_us: cfg
                .ftl
                .background_gc
                .then_some(cfg.ftl.background_gc_idle_us),
            background_steps: 0,
            buffer_slots: BinaryHeap::new(),
            release_on_evict: cfg.buffer.release == "on-evict",
            drain_page_us: cfg
                .buffer
                .drain_mb_s
                .map_or(0.0, |r| cfg.device.page_bytes.0 as f64 / r),
            drain_line_us: 0.0,
            admitted_us: (cfg.buffer.admission == "in-order").then_some(0.0),
            interface: (cfg.run.scheduler != "fifo").then(InterfaceStats::default),
            controller: Controller::new(cfg),
            power: power::Power::new(cfg.controller.sleep_after_us, cfg.controller.wake_us),
            link: Link::new(cfg),
            front_busy_at_start: (0.0, 0.0),
            drain: Drain::new(cfg, layout.dies()),
            threaded: false,
            layout,
            grouped,
            done: Vec::new(),
            read_ahead_ready: Vec::new(),
        }
    }

    /// When the next request (arriving at `arrival_us` by its trace or generator) is issued.
    #[inline]
    pub fn issue(&mut self, arrival_us: f64) -> f64 {
        let t = self.host.issue(arrival_us);
        self.res.now = t;
        t
    }

    /// Background GC may start at the returned time, before `t` (the request just issued): the
    /// device has been idle (no request in it, nothing running) for the idle threshold.
    pub fn idle_window(&self, t: f64) -> Option<f64> {
        let idle = self.background_idle_us?;
        let start = self.busy_until + idle;
        (self.host.in_flight.is_empty() && start < t).then_some(start)
    }

    /// Place one background-GC step's `ops` from `start`; returns when they complete.
    pub fn background(&mut self, start: f64, ops: &[NandOp]) -> f64 {
        self.background_steps += 1;
        let end = self.run_ops(start, ops);
        self.busy_until = self.busy_until.max(end);
        end
    }

    /// A command of `pages` pages taken at `t`: when the controller has handled it (its NAND
    /// operations are ready then; `t` without a controller).
    #[inline]
    pub fn command(&mut self, t: f64, write: bool, pages: impl FnOnce() -> u64) -> f64 {
        let t = match &mut self.power {
            Some(p) => p.start(t, self.busy_until),
            None => t,
        };
        self.controller.command(t, write, pages)
    }

    /// Background draining may start at the returned time, before `t` (the request just
    /// issued): the device has been idle for `buffer.drain_idle_us`.
    #[inline]
    pub fn drain_window(&self, t: f64) -> Option<f64> {
        let start = self.busy_until + self.drain.idle_us?;
        (self.host.in_flight.is_empty() && start < t).then_some(start)
    }

    /// Place a drained flush's `ops` (`pages` pages left the buffer) from `start` as background
    /// work; returns when they complete (the pages' slots free then, or at `start` with
    /// `buffer.release = "on-evict"`).
    pub fn drained(&mut self, start: f64, ops: &[NandOp], pages: u64, measured: bool) -> f64 {
        let end = self.run_ops(start, ops);
        self.busy_until = self.busy_until.max(end);
        if pages > 0 {
            let free = if self.release_on_evict { start } else { end };
            let free = self.retired(start, free, pages);
            self.buffer_slots.push(Reverse((At(free), pages)));
        }
        self.drain.count(pages, measured);
        end
    }

    /// Whether what the clock decides feeds back into the simulation: a host-interface
    /// scheduler picks which request is simulated next; idle draining and background GC run
    /// when the clock finds the device idle.
    pub fn feeds_back(&self) -> bool {
        self.interface.is_some()
            || self.drain.idle_us.is_some()
            || self.background_idle_us.is_some()
    }

    /// A new pass over the workload (`run.repeat`): open-loop arrivals continue from now.
    pub fn new_pass(&mut self) {
        self.host.arrivals.new_pass(self.host.last_issue);
    }

    /// Place `ops` (one request's, in issue order) from `t`; returns when the last completes.
    #[inline]
    pub fn run_ops(&mut self, t: f64, ops: &[NandOp]) -> f64 {
        if self.grouped.is_some() {
            return self.run_grouped(t, ops);
        }
        let mut done = std::mem::take(&mut self.done);
        done.clear();
        let (mut barrier, mut end) = (t, t);
        for (i, op) in ops.iter().enumerate() {
            let d = if op.kind == OpKind::Erase {
                let d = self.erase_block(op.addr, op.cause, end);
                barrier = barrier.max(d);
                d
            } else {
                let ready = barrier.max(predecessor(&done, i, op.after, end));
                self.serve(op.kind, op.cause, self.layout.die_of(op.addr), ready)
            };
            done.push(d);
            end = end.max(d);
        }
        self.done = done;
        end
    }

    /// Erase FTL block `pbn` from `ready`: it is a stripe over its dies (every die, or its
    /// flows' set), so a block on each is erased. When the last erase completes.
    fn erase_block(&mut self, pbn: u32, cause: Cause, ready: f64) -> f64 {
        let mut done = ready;
        for k in 0..self.layout.block_dies(pbn).len() {
            let die = self.layout.block_dies(pbn)[k];
            done = done.max(self.serve(OpKind::Erase, cause, die, ready));
        }
        done
    }

    /// The blocks' layout is split among sets of dies (flows confined to channels or dies):
    /// `parts` gives each range of blocks' end and its dies ([`Layout::partitioned`]).
    pub fn partition(&mut self, cfg: &Config, parts: &[(u64, Vec<u32>)]) {
        let units = cfg.nand.units_per_page(cfg.device.page_bytes.0);
        self.layout = Layout::partitioned(&cfg.device, cfg.device.pages_per_block, units, parts);
        if let Some(g) = &mut self.grouped {
            *g = group::Groups::default();
        }
    }

    #[inline]
    fn serve(&mut self, kind: OpKind, cause: Cause, die: u32, ready: f64) -> f64 {
        let array_us = self.service.draw(kind);
        let transfer_us = if kind == OpKind::Erase {
            0.0
        } else {
            self.transfer_us
        };
        let urgent = kind == OpKind::Read && cause.urgent_read();
        self.place(kind, urgent, die, ready, array_us, transfer_us)
    }

    /// Serve one array operation of `array_us` with `transfer_us` of data on the bus; `urgent`:
    /// a read a host request waits for.
    #[inline]
    fn place(
        &mut self,
        kind: OpKind,
        urgent: bool,
        die: u32,
        ready: f64,
        array_us: f64,
        transfer_us: f64,
    ) -> f64 {
        let op = Placed {
            kind,
            die,
            channel: self.layout.channel_of(die),
            array_us,
            transfer_us,
            command_us: self.command_us,
            urgent,
        };
        self.sched.serve(&op, ready, &mut self.res)
    }

    /// A request issued at `t` whose operations completed by `ops_end` (see the module's rules);
    /// recorded if `measured`. Returns its completion time.
    #[inline]
    pub fn finish(&mut self, s: Served, t: f64, ops_end: f64, measured: bool) -> f64 {
        let done = self.completion(s, t, ops_end);
        self.host.complete(done);
        self.record(s, t, done, measured);
        done
    }

    /// When a request taken at `t` whose operations completed by `ops_end` completes (the
    /// module's rules): a write's data crosses the link once the controller has handled the
    /// command, then is copied to DRAM; a read's data crosses the link once every page is served.
    #[inline]
    pub fn completion(&mut self, s: Served, t: f64, ops_end: f64) -> f64 {
        debug_assert!(s.ready_us >= t);
        let dram = s.dram_pages as f64 * self.dram_us;
        let now = self.res.now;
        match s.op {
            Op::Trim => s.ready_us.max(ops_end),
            Op::Write => {
                let arrived = self.link.transfer(now, s.ready_us, s.bytes);
                (arrived + dram).max(s.room_us).max(ops_end)
            }
            Op::Read => {
                let from = s.ready_us.max(s.read_ahead_us);
                let served = (from + dram).max(s.room_us).max(ops_end);
                self.link.transfer(now, served, s.bytes)
            }
        }
    }

    /// `pages` pages leave the buffer from `from`, their slots otherwise free at `free`: with
    /// `buffer.drain_mb_s`, not before the write path has retired them, after every page it
    /// retired before (a sustained write rate that the flash's speed and GC do not set).
    #[inline]
    fn retired(&mut self, from: f64, free: f64, pages: u64) -> f64 {
        if self.drain_page_us == 0.0 {
            return free;
        }
        self.drain_line_us = self.drain_line_us.max(from) + pages as f64 * self.drain_page_us;
        free.max(self.drain_line_us)
    }

    /// The buffer holds `pages` pages: its slots, free from the start.
    pub fn set_buffer_pages(&mut self, pages: u64) {
        self.drain.set_capacity(pages);
        self.buffer_slots.clear();
        if pages > 0 {
            self.buffer_slots.push(Reverse((At(0.0), pages)));
        }
    }

    /// A request taken at `t` and handled by the controller at `ready_us` flushed `flushed`
    /// pages from the buffer (its operations end at `ops_end`), dropped `dropped` (trims) and
    /// put `inserted` pages in it: when the last of those had a slot. The flushed pages' slots
    /// free at `ops_end` (`buffer.release = "on-program"`: their data stays in DRAM until it is
    /// programmed), or at `ready_us` ("on-evict": as they are evicted; the request itself still
    /// completes after its flush, through `ops_end`).
    #[inline]
    pub fn buffer_room(
        &mut self,
        t: f64,
        ready_us: f64,
        flushed: u64,
        dropped: u64,
        inserted: u64,
        ops_end: f64,
    ) -> f64 {
        if flushed > 0 {
            let free = if self.release_on_evict {
                ready_us
            } else {
                ops_end
            };
            let free = self.retired(ready_us, free, flushed);
            self.buffer_slots.push(Reverse((At(free), flushed)));
        }
        if dropped > 0 {
            self.buffer_slots.push(Reverse((At(t), dropped)));
        }
        // In order: no earlier than the write admitted before it.
        let mut room = match (&mut self.admitted_us, inserted) {
            (Some(last), 1..) => *last,
            _ => 0.0f64,
        };
        let mut left = inserted;
        while left > 0 {
            let Some(mut top) = self.buffer_slots.peek_mut() else {
                // More pages than slots (a buffer that inserts before it flushes, or none):
                // they wait for this request's own operations.
                return ops_end;
            };
            let Reverse((At(t), n)) = &mut *top;
            room = room.max(*t);
            let take = left.min(*n);
            *n -= take;
            left -= take;
            if *n == 0 {
                std::collections::binary_heap::PeekMut::pop(top);
            }
        }
        if let (Some(last), 1..) = (&mut self.admitted_us, inserted) {
            *last = room;
        }
        room
    }

    /// A request submitted at `submitted` completed at `done`: its latency, recorded if
    /// `measured`.
    #[inline]
    pub fn record(&mut self, s: Served, submitted: f64, done: f64, measured: bool) {
        self.record_seen(s, submitted, done, done, measured);
    }

    /// The device is busy with a request until `done` (its latency is recorded later, by
    /// [`Clock::record_seen`]).
    pub fn busy_to(&mut self, done: f64) {
        self.busy_until = self.busy_until.max(done);
    }

    /// [`Clock::record`] of a request the device completed at `done` and its host saw complete
    /// at `seen` (`host.cpu_us`, `host.wake_us`): its latency runs to `seen`.
    pub fn record_seen(&mut self, s: Served, submitted: f64, done: f64, seen: f64, measured: bool) {
        self.busy_until = self.busy_until.max(done);
        if measured {
            if self.start_us.is_none() {
                self.start_us = Some(submitted);
                self.busy_at_start = self.busy();
            }
            let lat = seen - submitted;
            match s.op {
                Op::Read => self.read.record(lat),
                Op::Write => self.write.record(lat),
                Op::Trim => {}
            }
            self.all.record(lat);
            if let Some(i) = &mut self.interval {
                i.record(lat);
            }
            self.end_us = self.end_us.max(seen);
            self.bytes += s.bytes;
            self.requests += 1;
        } else {
            // The measured window's front-end work starts after the last warm-up request's.
            self.front_busy_at_start = (self.controller.busy_us(), self.link.busy_us());
        }
    }

    /// Host-interface scheduling (`run.scheduler` ≠ "fifo", [`interface`]): the closed loop's
    /// depth (0 = open loop).
    pub fn queue_depth(&self) -> usize {
        self.host.depth
    }

    /// Open loop: the cap on outstanding requests (`run.max_inflight`; 0 = none).
    pub fn max_inflight(&self) -> usize {
        self.host.cap
    }

    /// Host-interface scheduling, open loop: when a request arriving at `arrival_us` is submitted.
    pub fn arrival(&mut self, arrival_us: f64) -> f64 {
        self.host.issue(arrival_us)
    }

    /// Host-interface scheduling: a request was submitted at `t`, with `in_device` requests
    /// (queued or in service) in the device.
    pub fn submitted(&mut self, t: f64, in_device: usize) {
        self.host.last_issue = t;
        self.host.max_in_flight = self.host.max_in_flight.max(in_device);
    }

    /// Host-interface scheduling: the controller takes a request at `t` (no operation placed from
    /// now on is ready earlier).
    pub fn take(&mut self, t: f64, queue: usize) {
        self.res.now = t;
        self.controller.set_queue(queue);
    }

    fn busy(&self) -> (Vec<f64>, Vec<f64>) {
        (
            self.res.dies.iter().map(|t| t.busy_us).collect(),
            self.res.channels.iter().map(|t| t.busy_us).collect(),
        )
    }

    /// The simulated length of the measured window (first issue to last completion).
    pub fn simulated_us(&self) -> f64 {
        self.start_us.map_or(0.0, |s| self.end_us - s)
    }

    /// Columns of a time-series row: the clock, and throughput and latencies since the last row.
    pub fn sample(&mut self) -> Vec<(String, f64)> {
        let now = self.host.last_issue;
        let span_s = (now - self.interval_start_us) / 1e6;
        let interval = self.interval.get_or_insert_default();
        let n = interval.count();
        let mut row = vec![
            ("time_us".to_string(), now),
            (
                "interval.iops".to_string(),
                if span_s > 0.0 {
                    n as f64 / span_s
                } else {
                    f64::NAN
                },
            ),
        ];
        row.extend(interval.metrics("interval.latency"));
        interval.reset();
        self.interval_start_us = now;
        row
    }

    /// The end-of-run metrics (docs/metrics.md, "Timed mode").
    pub fn metrics(&self) -> BTreeMap<String, f64> {
        let mut m = BTreeMap::new();
        for (name, l) in [
            ("read", &self.read),
            ("write", &self.write),
            ("all", &self.all),
        ] {
            m.extend(l.metrics(&format!("latency.{name}")));
        }
        let span = self.simulated_us();
        let per_s = |x: f64| {
            if span > 0.0 {
                x / (span / 1e6)
            } else {
                f64::NAN
            }
        };
        m.insert("time.simulated_us".into(), span);
        m.insert("time.clock_thread".into(), self.threaded as u8 as f64);
        m.insert("throughput.iops".into(), per_s(self.requests as f64));
        m.insert(
            "throughput.mib_s".into(),
            per_s(self.bytes as f64 / (1024.0 * 1024.0)),
        );
        let (dies, chans) = self.busy();
        let (d0, c0) = &self.busy_at_start;
        for (name, now, base) in [("die", dies, d0), ("channel", chans, c0)] {
            let util: Vec<f64> = now
                .iter()
                .enumerate()
                .map(|(i, b)| {
                    let b = b - base.get(i).copied().unwrap_or(0.0);
                    if span > 0.0 {
                        b / span
                    } else {
                        f64::NAN
                    }
                })
                .collect();
            let mean = util.iter().sum::<f64>() / util.len() as f64;
            let max = util.iter().copied().fold(f64::NAN, f64::max);
            m.insert(format!("util.{name}.mean"), mean);
            m.insert(format!("util.{name}.max"), max);
        }
        // Little's law: the time-average number of requests in the device.
        m.insert(
            "queue.mean_outstanding".into(),
            if span > 0.0 {
                self.all.sum_us() / span
            } else {
                f64::NAN
            },
        );
        m.insert(
            "queue.max_outstanding".into(),
            self.host.max_in_flight as f64,
        );
        if self.background_idle_us.is_some() {
            m.insert("gc.background_victims".into(), self.background_steps as f64);
        }
        let (c0, l0) = self.front_busy_at_start;
        let share = |busy: f64, n: usize| {
            if span > 0.0 {
                busy / (span * n as f64)
            } else {
                f64::NAN
            }
        };
        if self.controller.cores() > 0 {
            let busy = self.controller.busy_us() - c0;
            m.insert(
                "util.controller.mean".into(),
                share(busy, self.controller.cores()),
            );
        }
        if self.link.on() {
            m.insert("util.link".into(), share(self.link.busy_us() - l0, 1));
        }
        m.extend(self.drain.metrics());
        if let Some(p) = &self.power {
            m.insert("controller.wakes".into(), p.wakes as f64);
        }
        m.extend(
            self.sched
                .stats()
                .into_iter()
                .map(|(k, v)| (k.to_string(), v)),
        );
        if let Some(g) = &self.grouped {
            m.extend(g.metrics());
        }
        if let Some(i) = &self.interface {
            m.insert("queue.write_stops".into(), i.write_stops as f64);
            m.insert("queue.stalled_us".into(), i.stalled_us);
            m.insert("queue.out_of_order".into(), i.out_of_order as f64);
        }
        m
    }

    /// The latency distributions (ns) for `Result.histograms`.
    pub fn histograms(&self) -> BTreeMap<String, Vec<(u64, u64)>> {
        [
            ("read", &self.read),
            ("write", &self.write),
            ("all", &self.all),
        ]
        .into_iter()
        .filter(|(_, l)| l.count() > 0)
        .map(|(name, l)| (format!("latency.{name}_ns"), l.distribution_ns()))
        .collect()
    }

    /// Notes for the result's warnings.
    pub fn warnings(&self) -> Vec<String> {
        let mut w = Vec::new();
        if self.host.arrivals.reordered > 0 {
            w.push(format!(
                "{} requests arrived before the one listed before them; they were issued at that one's time",
                self.host.arrivals.reordered
            ));
        }
        w
    }
}

#[cfg(test)]
mod tests {
    use super::scheduler::Fifo;
    use super::Clock;
    use crate::config::Config;
    use crate::nand::{Cause, NandOp, OpKind};

    /// 2 channels × 2 dies, 8 pages per block: page p of a block is on die 0, 2, 1, 3 for
    /// p mod 4 = 0, 1, 2, 3 (channel-first: channel p mod 2). Command 3 µs, transfer 10, read
    /// 50, program 500, erase 1000: a read on an idle die and channel takes 3 + 50 + 10 = 63, a
    /// program 3 + 10 + 500 = 513.
    fn clock() -> Clock {
        let mut c = Config::default();
        c.device.channels = 2;
        c.device.chips_per_channel = 2;
        c.device.pages_per_block = 8;
        c.nand.read_us = 50.0;
        c.nand.program_us = 500.0;
        c.nand.erase_us = 1000.0;
        c.nand.transfer_us = 10.0;
        c.nand.command_us = 3.0;
        c.check_fields().unwrap();
        Clock::new(&c, Box::new(Fifo))
    }

    /// (kind, cause, address, how many ops back the one it waits for is; 0 = none).
    fn ops(list: &[(OpKind, Cause, u32, u16)]) -> Vec<NandOp> {
        list.iter()
            .map(|&(kind, cause, addr, after)| NandOp {
                after,
                ..NandOp::new(kind, cause, addr)
            })
            .collect()
    }
    use Cause::{Gc, Host, Map, Rmw};
    use OpKind::{Erase as E, Program as P, Read as R};

    #[test]
    fn a_data_read_waits_for_its_map_read_and_a_hit_does_not() {
        // Map read on die 0 (0..63), then the data read on die 2: 63..126.
        let miss = ops(&[(R, Map, 8, 0), (R, Host, 9, 1)]);
        assert_eq!(clock().run_ops(0.0, &miss), 2.0 * 63.0);
        // The same reads independent (a hit beside another page's read): on two channels, at
        // once.
        let apart = ops(&[(R, Map, 8, 0), (R, Host, 9, 0)]);
        assert_eq!(clock().run_ops(0.0, &apart), 63.0);
        // Two independent reads on dies 0 and 1 of channel 0: the second command follows the
        // first (3..6), its array 6..56, its data after the first's (53..63): 63..73.
        let one_channel = ops(&[(R, Host, 8, 0), (R, Host, 10, 0)]);
        assert_eq!(clock().run_ops(0.0, &one_channel), 73.0);
    }

    #[test]
    fn a_dirty_victims_write_back_comes_before_the_map_read_that_reuses_its_slot() {
        // Entry-level write-back: TP read (die 0, 0..63), its program (die 2, 63..576), the
        // map read into the freed slot (die 1, 576..639), the data read (die 3, 639..702).
        let chain = ops(&[
            (R, Map, 8, 0),
            (P, Map, 9, 1),
            (R, Map, 10, 1),
            (R, Host, 11, 1),
        ]);
        assert_eq!(clock().run_ops(0.0, &chain), 3.0 * 63.0 + 513.0);
    }

    #[test]
    fn a_copy_program_waits_for_its_own_read_and_the_erase_for_every_copy() {
        // GC of two pages of block 1: reads of pages 8 (die 0: 0..63) and 10 (die 1, same
        // channel: command 3..6, array 6..56, data 63..73); each copy's program waits for its
        // own read: page 1 (die 2) from 63: channel 63..76, array 76..576; page 3 (die 3) from
        // 73: channel 76..89, array 89..589. The erase of block 1 (every die) from 589:
        // commands 589..592 and 592..595 on each channel, arrays to 1595. The host program
        // after it (page 0, die 0): channel 1595..1608, array to 2108.
        let gc = [
            (R, Gc, 8, 0),
            (R, Gc, 10, 0),
            (P, Gc, 1, 2),
            (P, Gc, 3, 2),
            (E, Host, 1, 0),
            (P, Host, 0, 0),
        ];
        assert_eq!(clock().run_ops(0.0, &ops(&gc[..4])), 589.0);
        assert_eq!(clock().run_ops(0.0, &ops(&gc[..5])), 1595.0);
        assert_eq!(clock().run_ops(0.0, &ops(&gc)), 2108.0);
    }

    #[test]
    fn a_read_modify_writes_program_waits_for_its_read() {
        // The old copy read on die 0 (0..63), the new page programmed on die 2 (63..576).
        let rmw = ops(&[(R, Rmw, 8, 0), (P, Host, 1, 1)]);
        assert_eq!(clock().run_ops(0.0, &rmw), 63.0 + 513.0);
        // A program from the buffer beside a read: at once (0..513).
        let apart = ops(&[(R, Rmw, 8, 0), (P, Host, 1, 0)]);
        assert_eq!(clock().run_ops(0.0, &apart), 513.0);
    }

    #[test]
    fn a_dependency_from_before_the_batch_is_none() {
        // The first op of a batch cannot wait for one of another batch.
        assert_eq!(clock().run_ops(0.0, &ops(&[(R, Host, 9, 3)])), 63.0);
    }
}
