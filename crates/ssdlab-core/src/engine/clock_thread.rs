//! The clock on a second thread (`run.clock_thread`). The replay thread simulates each request as
//! in counts mode and hands it over, in batches with its NAND operations, to a thread that places
//! it in time; requests keep their order. Where nothing the clock decides feeds back into the
//! simulation ([`Clock::feeds_back`], no time series) each side makes the same calls in the same
//! order as one thread does, so results are identical.

use super::readahead::Records;
use super::sim::Sim;
use super::source::At;
use super::timed::Counted;
use crate::error::{Result, SimError};
use crate::nand::NandOp;
use crate::request::Request;
use crate::timed::Clock;
use std::sync::mpsc::{channel, sync_channel, Receiver, Sender, SyncSender};
use std::thread::JoinHandle;

/// Requests a batch holds (about 150 KiB of operations in a GC-heavy run: recent enough to be
/// in the shared cache when the clock reads them).
const BATCH: usize = 1024;
/// Batches on their way to the clock.
const IN_FLIGHT: usize = 2;

/// Requests counted, with their operations, watermark drains and whether a pass ends after them.
#[derive(Default)]
struct Batch {
    counted: Vec<Counted>,
    ops: Vec<NandOp>,
    drains: Vec<(u32, u64)>,
    /// What read-ahead did in them.
    read_ahead: Records,
    new_pass: bool,
}

/// The replay thread's end: the requests counted since the last batch (their operations and
/// drains accumulate in the NAND log and `Sim::drains` until it is sent) and the clock thread.
pub(super) struct Feed {
    counted: Vec<Counted>,
    tx: SyncSender<Batch>,
    /// Batches the clock has placed, emptied for reuse.
    back: Receiver<Batch>,
    clock: JoinHandle<Clock>,
}

/// Whether the run may place time on a second thread.
pub(super) fn usable(clock: &Clock, clock_thread: bool, sample_every: u64) -> bool {
    clock_thread && sample_every == 0 && !clock.feeds_back()
}

impl Feed {
    /// Start the clock thread with `clock`.
    pub(super) fn start(mut clock: Clock) -> Result<Feed> {
        let (tx, rx) = sync_channel::<Batch>(IN_FLIGHT);
        let (back_tx, back) = channel();
        clock.threaded = true;
        let handle = std::thread::Builder::new()
            .name("ssdlab-clock".into())
            .spawn(move || {
                place_all(&mut clock, rx, back_tx);
                clock
            })
            .map_err(|e| {
                SimError::config(
                    "run.clock_thread",
                    format!("no thread for the clock ({e}); set it to false to run on one"),
                )
            })?;
        Ok(Feed {
            counted: Vec::new(),
            tx,
            back,
            clock: handle,
        })
    }

    /// Simulate `req` and queue it for the clock.
    #[inline(always)]
    pub(super) fn push(
        &mut self,
        sim: &mut Sim,
        req: &Request,
        at: At,
        measured: bool,
    ) -> Result<()> {
        let c = sim.count(req, at, measured)?;
        self.counted.push(c);
        if self.counted.len() == BATCH {
            self.send(sim, false)?;
        }
        Ok(())
    }

    /// Hand the batch over; `new_pass`: the next request starts a pass (`run.repeat`).
    pub(super) fn send(&mut self, sim: &mut Sim, new_pass: bool) -> Result<()> {
        let empty = self.back.try_recv().unwrap_or_default();
        let full = Batch {
            counted: std::mem::replace(&mut self.counted, empty.counted),
            ops: sim.be.nand.swap_log(empty.ops),
            drains: std::mem::replace(&mut sim.drains, empty.drains),
            read_ahead: std::mem::replace(&mut sim.be.readahead.records, empty.read_ahead),
            new_pass,
        };
        self.tx.send(full).map_err(|_| stopped())
    }

    /// Hand over what is left and wait for the clock to place it: the clock.
    pub(super) fn finish(mut self, sim: &mut Sim) -> Result<Clock> {
        if !self.counted.is_empty() {
            self.send(sim, false)?;
        }
        drop(self.tx);
        self.clock.join().map_err(|_| stopped())
    }
}

fn stopped() -> SimError {
    SimError::Integrity("the clock thread stopped unexpectedly".into())
}

/// The clock thread: every request of every batch, as the one-thread replay times it
/// ([`Sim::timed_request`]).
fn place_all(clock: &mut Clock, rx: Receiver<Batch>, back: Sender<Batch>) {
    for mut b in rx {
        let (mut ops, mut drains) = (&b.ops[..], &b.drains[..]);
        for c in &b.counted {
            let t = clock.issue(c.arrival_us);
            let (own_drains, later_drains) = drains.split_at(c.drains as usize);
            let n = c.ops as usize + own_drains.iter().map(|&(n, _)| n as usize).sum::<usize>();
            let (own_ops, later_ops) = ops.split_at(n);
            let (served, ops_end) = c.place(clock, t, own_ops, own_drains, &mut b.read_ahead);
            clock.finish(served, t, ops_end, c.measured);
            (ops, drains) = (later_ops, later_drains);
        }
        if b.new_pass {
            clock.new_pass();
        }
        b.counted.clear();
        b.ops.clear();
        b.drains.clear();
        b.new_pass = false;
        // The replay thread may have finished: the batch is then simply dropped.
        let _ = back.send(b);
    }
}
