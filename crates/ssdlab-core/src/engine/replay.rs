//! The replay: precondition, then every request of every pass (`run.repeat`) through address
//! mapping, the write buffer and the FTL; a snapshot of the counters at the end of the warm-up
//! (`run.warmup_requests`) is the base of the measured window; time-series rows every
//! `run.sample_every` requests; the final buffer flush and the integrity check.
//!
//! One loop does this for one flow and for several (`[[flows]]`): it is generic over what
//! submits the requests ([`Submissions`]: one flow's passes here, several flows on the clock in
//! `flows`), and each submission counts through [`Loop::submitted`].

use super::clock_thread::{usable, Feed};
use super::sim::{Sim, Snapshot};
use super::source::{no_requests, reopen, At, Keeper, Source};
use super::timed::{FlowStats, Interface};
use super::Progress;
use crate::config::{Config, NandConfig};
use crate::error::{Result, SimError};
use crate::request::Request;
use crate::timed::Clock;
use std::collections::BTreeMap;

const PROGRESS_EVERY: u64 = 1 << 16;

/// End-of-run metrics that are also sampled into the time series (cumulative counts and ratios
/// so far); every `nand.programs.*` (each cause and the total), FTL counter and gauge and the
/// buffer's policy gauges are sampled too.
pub const SERIES_METRICS: &[&str] = &[
    "host.write_requests",
    "host.write_pages",
    "host.read_pages",
    "buffer.page_hit_ratio",
    "buffer.flushes",
    "buffer.padded_flushes",
    "nand.reads.total",
    "nand.erases",
    "waf",
    "ftl.waf",
];

/// Most time-series rows a run may record (a bound on memory; `run.sample_every` names it).
const MAX_SAMPLES: u64 = 1_000_000;

/// The time series being recorded: one value per row in every column.
#[derive(Default)]
pub(super) struct Series {
    rows: usize,
    pub(super) columns: BTreeMap<String, Vec<f64>>,
}

impl Series {
    /// Append a row; a column missing from it gets NaN (and a new column NaN in earlier rows).
    fn push(&mut self, row: impl IntoIterator<Item = (String, f64)>) -> Result<()> {
        if self.rows as u64 >= MAX_SAMPLES {
            return Err(SimError::config(
                "run.sample_every",
                format!("the run would record more than {MAX_SAMPLES} samples; sample less often"),
            ));
        }
        for (k, v) in row {
            let col = self
                .columns
                .entry(k)
                .or_insert_with(|| vec![f64::NAN; self.rows]);
            if col.len() == self.rows {
                col.push(v);
            }
        }
        self.rows += 1;
        for col in self.columns.values_mut() {
            col.resize(self.rows, f64::NAN);
        }
        Ok(())
    }

    /// Drop the last row.
    fn pop(&mut self) {
        if self.rows > 0 {
            self.rows -= 1;
            for col in self.columns.values_mut() {
                col.truncate(self.rows);
            }
        }
    }
}

impl Sim {
    /// One time-series row: `done` requests replayed, counts since `base`. Kept out of line: the
    /// replay loop only pays for the comparison that decides to call it.
    #[cold]
    #[inline(never)]
    fn sample(
        &mut self,
        series: &mut Series,
        done: u64,
        measured: bool,
        base: &Snapshot,
        timing: &NandConfig,
        clock: Option<&mut Clock>,
    ) -> Result<()> {
        let m = self.metrics_since(base, timing);
        let ftl: Vec<&'static str> = (self.be.ftl.counters().into_iter().map(|(k, _)| k))
            .chain(self.be.ftl.gauges().into_iter().map(|(k, _)| k))
            .collect();
        let mut row = vec![
            ("requests".to_string(), done as f64),
            ("measured".to_string(), if measured { 1.0 } else { 0.0 }),
        ];
        for (k, v) in m {
            let keep = k.starts_with("nand.programs.")
                || k.starts_with("padding.")
                || k == "buffer.hitstat.levels"
                || k == "buffer.clean_evictions"
                || k.starts_with("buffer.ref.")
                || k.starts_with("buffer.bpac.")
                || SERIES_METRICS.contains(&k.as_str())
                || ftl.contains(&k.as_str());
            if keep {
                row.push((k, v));
            }
        }
        if let Some(c) = clock {
            row.extend(c.sample());
        }
        series.push(row)
    }
}

/// What the replay leaves for the metrics.
pub(super) struct Replayed {
    /// Requests replayed, warm-up included.
    pub(super) done: u64,
    pub(super) warmup: u64,
    /// The counters at the end of the warm-up (at the start without one).
    pub(super) base: Snapshot,
    pub(super) series: Series,
    pub(super) submitted: Submitted,
}

/// What submits the requests to the replay loop: one flow's passes ([`OneFlow`]) or several
/// flows on the clock (`flows::Flows`). The loop is generic over it, so one flow's path pays
/// for nothing of several's.
pub(super) trait Submissions {
    /// Submit every request, each followed by [`Loop::submitted`]; `clock`: timed mode's.
    fn run(self, sim: &mut Sim, lp: &mut Loop, clock: Option<Clock>) -> Result<Submitted>;
}

/// What submitting every request leaves besides the counts.
pub(super) struct Submitted {
    /// Timed mode: the clock, with the latencies of the measured window.
    pub(super) clock: Option<Clock>,
    /// Malformed records skipped in the first pass.
    pub(super) skipped: u64,
    /// Several flows: each one's measured requests (empty with one).
    pub(super) flows: Vec<FlowStats>,
}

/// The replay loop's state between requests, whatever submits them: the warm-up's end,
/// time-series samples and progress are due by request count.
pub(super) struct Loop<'a> {
    done: u64,
    warmup: u64,
    /// `run.warmup_us`: the warm-up ends at the first submission at or after it (0 = off).
    warmup_us: f64,
    every: u64,
    next_sample: u64,
    /// The request count at which [`Loop::event`] is next due.
    next_event: u64,
    series: Series,
    /// The counters the run's metrics are measured from (after preconditioning and any
    /// fast-forward).
    pub(super) base: Snapshot,
    total: u64,
    timing: &'a NandConfig,
    progress: &'a mut dyn Progress,
    /// The run's warnings, for what the submissions note.
    pub(super) warnings: &'a mut Vec<String>,
}

impl Loop<'_> {
    /// Whether the next request is in the measured window.
    #[inline(always)]
    pub(super) fn measured(&self) -> bool {
        self.done >= self.warmup
    }

    /// A request is about to be submitted at `now`: with `run.warmup_us`, the warm-up ends
    /// there once `now` has reached it (the snapshot the measured window counts from).
    pub(super) fn warm_by(&mut self, sim: &mut Sim, now: f64) {
        if self.warmup_us > 0.0 && self.warmup == u64::MAX && now >= self.warmup_us {
            self.warmup = self.done;
            self.base = sim.snapshot();
            sim.be.groups.reset_counts();
            self.next_event = self.next_event();
        }
    }

    /// A request was submitted: count it, then whatever is due by count ([`Loop::event`]).
    #[inline(always)]
    pub(super) fn submitted(&mut self, sim: &mut Sim, clock: Option<&mut Clock>) -> Result<()> {
        self.done += 1;
        if self.done == self.next_event {
            self.event(sim, clock)?;
        }
        Ok(())
    }

    /// The first request count at which something is due: a time-series sample, a progress
    /// report or the end of the warm-up.
    fn next_event(&self) -> u64 {
        let progress = (self.done / PROGRESS_EVERY + 1) * PROGRESS_EVERY;
        let warmup = if self.warmup > self.done {
            self.warmup
        } else {
            u64::MAX
        };
        self.next_sample.min(progress).min(warmup)
    }

    /// What is due after `done` requests, in this order: the sample, the progress report, and
    /// (at the end of the warm-up) the snapshot that the measured window counts from. Kept out of
    /// line: the replay loop only pays for one comparison per request.
    #[cold]
    #[inline(never)]
    fn event(&mut self, sim: &mut Sim, clock: Option<&mut Clock>) -> Result<()> {
        if self.done == self.next_sample {
            sim.sample(
                &mut self.series,
                self.done,
                self.done > self.warmup,
                &self.base,
                self.timing,
                clock,
            )?;
            self.next_sample += self.every;
        }
        if self.done.is_multiple_of(PROGRESS_EVERY) && !self.progress.update(self.done, self.total)
        {
            return Err(SimError::Cancelled);
        }
        if self.done == self.warmup {
            self.base = sim.snapshot();
            sim.be.groups.reset_counts();
        }
        self.next_event = self.next_event();
        Ok(())
    }
}

/// The replay loop: precondition `sim`, submit every request of `subs`, then the final flush,
/// the integrity check and the last sample ([`finish`]). `limit_total`: the requests the sample
/// limit is checked on before the replay; `total`: requests in all (0 = unknown), for progress.
pub(super) fn drive<S: Submissions>(
    sim: &mut Sim,
    subs: S,
    resolved: &Config,
    limit_total: u64,
    total: u64,
    progress: &mut dyn Progress,
    warnings: &mut Vec<String>,
) -> Result<Replayed> {
    super::precondition::precondition(sim, resolved)?;
    // Timed mode starts on an idle device after the precondition.
    let clock = if resolved.run.mode == "timed" {
        sim.be.nand.set_logging(true);
        let mut c = Clock::new(resolved, crate::registry::build_scheduler(resolved)?);
        if let Some(parts) = crate::ftl::fdp::stripes(resolved, sim.geo.physical_blocks)? {
            c.partition(resolved, &parts);
        }
        c.set_buffer_pages(sim.buffer_pages);
        sim.drain_to = c.drain.target();
        Some(c)
    } else {
        None
    };
    // A warm-up by time ends when a submission reaches it ([`Loop::warm_by`]).
    let warmup_us = resolved.run.warmup_us;
    let warmup = if warmup_us > 0.0 {
        u64::MAX
    } else {
        resolved.run.warmup_requests
    };
    let every = resolved.run.sample_every;
    // Known totals fail here, before the replay (the samples, the last one included, number
    // ⌈total / every⌉); otherwise `Series::push` stops the run at the limit.
    if every > 0 && limit_total.div_ceil(every) > MAX_SAMPLES {
        return Err(SimError::config(
            "run.sample_every",
            format!("{every} gives more than {MAX_SAMPLES} samples over {limit_total} requests; sample less often"),
        ));
    }
    let mut lp = Loop {
        done: 0,
        warmup,
        warmup_us,
        every,
        // Off: u64::MAX is never reached, so the replay loop only pays one comparison per request.
        next_sample: if every > 0 { every } else { u64::MAX },
        next_event: 0,
        series: Series::default(),
        base: sim.snapshot(),
        total,
        timing: &resolved.nand,
        progress,
        warnings,
    };
    lp.next_event = lp.next_event();
    let run = subs.run(sim, &mut lp, clock)?;
    finish(sim, lp, run)
}

/// One flow: its workload's passes (`run.repeat`), each further one reopened or replayed from
/// memory.
pub(super) struct OneFlow<'a> {
    pub(super) src: Source,
    pub(super) resolved: &'a Config,
}

/// How one flow's requests are served: counts mode, or timed mode on this thread (through the
/// host interface's queue or not) or with the clock on its own thread.
struct Serve {
    /// Timed mode's clock (None: counts mode, or the clock is on its own thread).
    clock: Option<Clock>,
    /// Timed mode's host-interface queue (None: `run.scheduler = "fifo"`).
    interface: Option<Interface>,
    /// Timed mode with the clock on its own thread (`run.clock_thread`): it has the clock.
    feed: Option<Feed>,
    /// The note on the first request of [`HUGE_REQUEST_PAGES`] or more, once given, and the
    /// size that calls for it (u64::MAX once it is given).
    huge: Option<String>,
    huge_bytes: u64,
}

/// The note on a request of [`HUGE_REQUEST_PAGES`] or more (`page_shift`: log2 of the page).
#[cold]
#[inline(never)]
fn huge_request_note(req: &Request, at: At, page_shift: u32) -> String {
    format!(
        "the request at {at} is {} ({} pages) in one piece: replaying it takes a long time, with \
         no progress shown until it ends (are its sizes in the unit the trace format says? \
         `ssdlab trace info` shows how the file reads)",
        crate::units::human_bytes(req.len_bytes),
        crate::units::grouped(req.len_bytes >> page_shift),
    )
}

/// A request of this many pages or more takes tens of seconds to minutes by itself, during
/// which the progress (counted in requests) stands still: the run says so as it starts it.
const HUGE_REQUEST_PAGES: u64 = 1 << 28;

/// One request of one flow (with a prefetch hint for one a few places ahead), then whatever is
/// due after it ([`Loop::submitted`]).
#[inline(always)]
fn one(
    sim: &mut Sim,
    lp: &mut Loop,
    s: &mut Serve,
    req: &Request,
    ahead_offset_bytes: Option<u64>,
    at: At,
) -> Result<()> {
    if let Some(a) = ahead_offset_bytes {
        // The first page of a request a few places ahead (as the address map "none" places it;
        // under other maps the hint is merely useless).
        sim.buffer.prefetch(a >> sim.page_shift);
    }
    if req.len_bytes >= s.huge_bytes {
        let note = huge_request_note(req, at, sim.page_shift);
        lp.progress.note(&note);
        s.huge = Some(note);
        s.huge_bytes = u64::MAX;
    }
    let measured = lp.measured();
    match (s.feed.as_mut(), s.clock.as_mut(), s.interface.as_mut()) {
        (Some(f), _, _) => f.push(sim, req, at, measured)?,
        (None, Some(c), None) => sim.timed_request(c, req, at, measured)?,
        (None, Some(c), Some(q)) => sim.submit(c, q, req, at, measured)?,
        (None, None, _) => sim.request(req, at)?,
    }
    lp.submitted(sim, s.clock.as_mut())
}

impl Submissions for OneFlow<'_> {
    fn run(self, sim: &mut Sim, lp: &mut Loop, clock: Option<Clock>) -> Result<Submitted> {
        let OneFlow { mut src, resolved } = self;
        let mut s = Serve {
            interface: clock
                .as_ref()
                .and_then(|_| Interface::new(&resolved.run.scheduler)),
            clock,
            feed: None,
            huge: None,
            huge_bytes: HUGE_REQUEST_PAGES << sim.page_shift,
        };
        if s.clock
            .as_ref()
            .is_some_and(|c| usable(c, resolved.run.clock_thread, lp.every))
        {
            s.feed = s.clock.take().map(Feed::start).transpose()?;
        }
        let mut skipped = 0u64;
        // Later passes replay the first from memory when it is kept (the pre-pass may have kept it).
        let mut parsed = match &src {
            Source::Kept(k) => Some(k.parsed().clone()),
            _ => None,
        };
        let mut keeper = Keeper::new(
            resolved.run.repeat > 1 && matches!(src, Source::Trace(_) | Source::Pipelined(_)),
        );
        for pass in 0..resolved.run.repeat {
            if pass > 0 {
                if let Some(c) = s.clock.as_mut() {
                    c.new_pass();
                }
                if let Some(f) = s.feed.as_mut() {
                    f.send(sim, true)?;
                }
                src = reopen(resolved, parsed.as_ref())?;
            }
            loop {
                // Requests decoded ahead come as a run (binary traces): no per-request dispatch.
                let drained = src.drain_run(|req, ahead, line| {
                    keeper.keep(req, line);
                    one(sim, lp, &mut s, req, Some(ahead), At::Line(line))
                })?;
                if drained > 0 {
                    continue;
                }
                let Some(req) = src.next() else { break };
                let (req, at) = (req?, src.at());
                if let At::Line(line) = at {
                    keeper.keep(&req, line);
                }
                one(sim, lp, &mut s, &req, None, at)?;
            }
            if let (Some(c), Some(q)) = (s.clock.as_mut(), s.interface.as_mut()) {
                sim.drain(c, q)?;
            }
            if pass == 0 && parsed.is_none() {
                parsed = std::mem::replace(&mut keeper, Keeper::new(false)).finish(&src);
            }
            if pass == 0 {
                lp.warnings.extend(src.read_warnings(resolved, "workload"));
                let (n, first) = src.skipped();
                skipped = n;
                if let Some(first) = first {
                    lp.warnings.push(format!(
                        "skipped {skipped} malformed records; first: {first}"
                    ));
                }
            }
            if pass == 0 && lp.done == 0 {
                return Err(no_requests(resolved, src.lines(), src.format_name()));
            }
        }
        if let Some(f) = s.feed.take() {
            s.clock = Some(f.finish(sim)?);
        }
        lp.warnings.extend(s.huge.take());
        Ok(Submitted {
            clock: s.clock,
            skipped,
            flows: Vec::new(),
        })
    }
}

/// After the last request: the final flush (counted, not timed), the integrity check and the
/// last time-series row.
fn finish(sim: &mut Sim, lp: Loop, mut submitted: Submitted) -> Result<Replayed> {
    let Loop {
        done,
        warmup,
        warmup_us,
        every,
        total,
        base,
        mut series,
        timing,
        progress,
        ..
    } = lp;
    if warmup_us > 0.0 && warmup == u64::MAX {
        return Err(SimError::config(
            "run.warmup_us",
            format!("the run ended before the warm-up did ({done} requests submitted); shorten the warm-up or give the workloads more requests"),
        ));
    }
    if warmup >= done {
        return Err(SimError::config(
            "run.warmup_requests",
            format!(
                "{warmup} warm-up requests leave nothing to measure ({done} requests in the run)"
            ),
        ));
    }
    // The final flush is not a host request: it is counted, not timed.
    sim.be.nand.set_logging(false);
    sim.buffer.flush_all(&mut sim.be)?;
    progress.update(done, total);
    if sim.check {
        sim.be.ftl.check_integrity(&sim.latest)?;
    }
    if every > 0 {
        // The last row is taken after the final flush; a row already at `done` is replaced.
        if series.columns.get("requests").and_then(|c| c.last()) == Some(&(done as f64)) {
            series.pop();
        }
        let clock = submitted.clock.as_mut();
        sim.sample(&mut series, done, true, &base, timing, clock)?;
    }
    Ok(Replayed {
        done,
        warmup,
        base,
        series,
        submitted,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_terabyte_request_is_noted_before_it_runs() {
        // 2^28 pages of 4 KiB: 1 TiB, about half a minute at ten million pages a second.
        assert_eq!(HUGE_REQUEST_PAGES << 12, 1 << 40);
        let r = Request::new(0.0, crate::request::Op::Write, 0, 4 << 40, 0);
        assert_eq!(
            huge_request_note(&r, At::Line(7), 12),
            "the request at line 7 is 4.0 TiB (1,073,741,824 pages) in one piece: replaying it \
             takes a long time, with no progress shown until it ends (are its sizes in the unit \
             the trace format says? `ssdlab trace info` shows how the file reads)"
        );
    }
}
