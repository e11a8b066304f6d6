//! The replay: precondition, then every request of every pass (`run.repeat`) through address
//! mapping, the write buffer and the FTL; a snapshot of the counters at the end of the warm-up
//! (`run.warmup_requests`) is the base of the measured window; time-series rows every
//! `run.sample_every` requests; the final buffer flush and the integrity check.

use super::address::AddressMap;
use super::clock_thread::{usable, Feed};
use super::flows::{FlowPlan, FlowStats};
use super::flush::Backend;
use super::resolve::no_requests;
use super::source::{open_source, At, Keeper, Kept, Scan, Source};
use super::timed::Interface;
use super::Progress;
use crate::buffer::WriteBuffer;
use crate::config::{Config, NandConfig};
use crate::error::{Result, SimError};
use crate::ftl::{Shape, UnitPage};
use crate::metrics::HostCounters;
use crate::nand::{Cause, NandCounters};
use crate::request::{Op, Request};
use crate::timed::Clock;
use crate::units::{Geometry, Lpn, PageSpan, SectorMask};
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

/// The counters at one point of the run (the measured window's base).
pub(super) struct Snapshot {
    pub(super) host: HostCounters,
    pub(super) nand: NandCounters,
    pub(super) erases: Vec<u32>,
    pub(super) ftl: Vec<(&'static str, u64)>,
    /// The FTL's cumulative distributions ([`crate::ftl::Ftl::histograms`]).
    pub(super) ftl_histograms: Vec<(&'static str, Vec<(u64, u64)>)>,
}

/// The simulated device: address map → write buffer → flush path (FTL, NAND).
pub(super) struct Sim {
    pub(super) geo: Geometry,
    pub(super) map: AddressMap,
    pub(super) buffer: Box<dyn WriteBuffer>,
    pub(super) be: Backend,
    /// Latest host version of every LPN (integrity checking only; 0 = none).
    latest: Vec<u32>,
    check: bool,
    version: u32,
    /// log2 of the page size in bytes.
    page_shift: u32,
    /// The write buffer's capacity in pages (host-interface scheduling asks if a write flushes).
    pub(super) buffer_pages: u64,
    /// The FTL tags host pages (placement): pages carry its tag, not the request's stream.
    tags: bool,
    /// Timed mode: the watermark drains since the clock last took them (operations, pages),
    /// as the NAND log holds their operations.
    pub(super) drains: Vec<(u32, u64)>,
    /// Timed mode: the buffer's watermark in pages (`buffer.drain_watermark`; None: off).
    pub(super) drain_to: Option<u64>,
    /// Several flows: each one's address map onto its range; the one in use is `map`, its
    /// slot holding the map it replaced.
    pub(super) flow_maps: Vec<AddressMap>,
    flow_in_use: Option<usize>,
}

impl Sim {
    pub(super) fn new(
        geo: Geometry,
        map: AddressMap,
        buffer: Box<dyn WriteBuffer>,
        be: Backend,
        check: bool,
    ) -> Result<Sim> {
        Ok(Sim {
            buffer_pages: 0,
            tags: be.ftl.tags(),
            page_shift: geo.page_bytes.trailing_zeros(),
            latest: if check {
                crate::units::alloc_vec(geo.logical_pages, 0, "integrity versions")?
            } else {
                Vec::new()
            },
            geo,
            map,
            buffer,
            be,
            check,
            version: 0,
            drains: Vec::new(),
            drain_to: None,
            flow_maps: Vec::new(),
            flow_in_use: None,
        })
    }

    /// Map addresses as flow `flow` does (its range of the device) from now on.
    #[inline]
    pub(super) fn use_flow_map(&mut self, flow: usize) {
        if self.flow_in_use == Some(flow) || flow >= self.flow_maps.len() {
            return;
        }
        if let Some(f) = self.flow_in_use {
            std::mem::swap(&mut self.map, &mut self.flow_maps[f]);
        }
        std::mem::swap(&mut self.map, &mut self.flow_maps[flow]);
        self.flow_in_use = Some(flow);
    }

    pub(super) fn snapshot(&self) -> Snapshot {
        Snapshot {
            host: self.be.host.clone(),
            nand: self.be.nand.counters.clone(),
            erases: self.be.nand.erase_counts.clone(),
            ftl: self.be.ftl.counters(),
            ftl_histograms: self.be.ftl.histograms(),
        }
    }

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

    #[inline]
    fn next_version(&mut self) -> Result<u32> {
        if self.check {
            self.version = self.version.checked_add(1).ok_or_else(|| {
                SimError::Invalid("run.check_integrity supports at most 2^32 page writes".into())
            })?;
        }
        Ok(self.version)
    }

    fn precondition_fill(&mut self) -> Result<()> {
        if self.be.ftl.fill_bulk(&mut self.be.nand)? {
            return Ok(());
        }
        let ppb = self.geo.pages_per_block;
        let mut unit = Vec::with_capacity(ppb as usize);
        for lbn in 0..self.geo.logical_blocks() {
            unit.clear();
            // Placement sees the fill as one block-sized write request per block, and each
            // page goes down with its own tag.
            if self.tags {
                self.be.ftl.begin_write(ppb * self.geo.page_bytes);
            }
            for off in 0..ppb {
                let v = self.next_version()?;
                if self.check {
                    self.latest[(lbn * ppb + off) as usize] = v;
                }
                let page = UnitPage::new(off as u32, v, Cause::Host);
                if self.tags {
                    let hint = self.be.ftl.tag(lbn * ppb + off);
                    self.be
                        .ftl
                        .write_pages(lbn, &[page], hint, &mut self.be.nand)?;
                } else {
                    unit.push(page);
                }
            }
            if !self.tags {
                let whole = Shape::Block { fill: false };
                self.be
                    .ftl
                    .write_unit(lbn, &unit, whole, 0, &mut self.be.nand)?;
            }
        }
        Ok(())
    }

    /// Sectors `mask` of host page `lpn`, written by `req`, through the address map to the buffer.
    #[inline(always)]
    fn write_page(&mut self, lpn: Lpn, mask: SectorMask, req: &Request, at: At) -> Result<()> {
        let lpn = self.map.map_lpn(&self.geo, lpn, req, at)?;
        let v = self.next_version()?;
        if self.check {
            self.latest[lpn as usize] = v;
        }
        let hint = if self.tags {
            self.be.ftl.tag(lpn)
        } else {
            req.dev
        };
        let before = self.buffer.write(lpn, mask, v, hint, &mut self.be)?;
        if before != 0 {
            // A page cached clean for a read saves no program: counted apart.
            let clean = self.buffer.last_write_hit_clean();
            let h = &mut self.be.host;
            if clean {
                h.clean_write_hit_pages += 1;
            } else {
                h.write_hit_pages += 1;
                h.write_hit_sectors += (before & mask).count_ones() as u64;
            }
        }
        Ok(())
    }

    /// One host request: its pages (LPN + sector mask) through the address map to the buffer
    /// (writes), the buffer or the FTL (reads), or both (trims).
    #[inline(always)]
    pub(super) fn request(&mut self, req: &Request, at: At) -> Result<()> {
        // Pages are a power of two of sectors (device.page_bytes is checked).
        let shift = self.geo.sectors_per_page().trailing_zeros();
        let span = PageSpan::new(req.offset_bytes, req.len_bytes, shift);
        match req.op {
            Op::Write => {
                let h = &mut self.be.host;
                h.write_requests += 1;
                h.write_bytes += req.len_bytes;
                self.buffer.begin_request();
                if self.tags {
                    self.be.ftl.begin_write(req.len_bytes);
                }
                if req.len_bytes == self.geo.page_bytes
                    && req.offset_bytes & (self.geo.page_bytes - 1) == 0
                {
                    // The common request, one whole page: no span to walk.
                    let h = &mut self.be.host;
                    h.write_pages += 1;
                    h.write_sectors += 1 << shift;
                    let lpn = req.offset_bytes >> self.page_shift;
                    self.write_page(lpn, self.geo.full_mask(), req, at)?;
                } else {
                    let h = &mut self.be.host;
                    h.write_pages += span.pages();
                    h.write_sectors += span.sectors();
                    for (lpn, mask) in span {
                        self.write_page(lpn, mask, req, at)?;
                    }
                }
                self.be.host.occupancy_sum += self.buffer.pages();
            }
            Op::Read => {
                self.be.host.read_requests += 1;
                self.be.host.read_bytes += req.len_bytes;
                self.be.host.read_pages += span.pages();
                for (lpn, mask) in span {
                    let lpn = self.map.map_lpn(&self.geo, lpn, req, at)?;
                    let buffered = self.buffer.read(lpn, mask, &mut self.be)? & mask;
                    if buffered == mask {
                        self.be.host.read_hit_pages += 1;
                    } else if !self.be.ftl.read(lpn, Cause::Host, &mut self.be.nand)?
                        && buffered == 0
                    {
                        // Neither buffered nor mapped: the read finds no data and costs nothing.
                        self.be.host.unwritten_read_pages += 1;
                    }
                }
            }
            Op::Trim => {
                self.be.host.trim_requests += 1;
                let full = self.geo.full_mask();
                for (lpn, mask) in span {
                    // Only whole pages can be discarded.
                    if mask != full {
                        continue;
                    }
                    let lpn = self.map.map_lpn(&self.geo, lpn, req, at)?;
                    self.be.host.trim_pages += 1;
                    self.buffer.trim(lpn);
                    self.be.ftl.trim(lpn);
                    if self.check {
                        self.latest[lpn as usize] = 0;
                    }
                }
            }
        }
        Ok(())
    }
}

/// What the replay leaves for the metrics.
pub(super) struct Replayed {
    /// Requests replayed, warm-up included.
    pub(super) done: u64,
    pub(super) warmup: u64,
    /// Malformed records skipped in the first pass.
    pub(super) skipped: u64,
    /// The counters at the end of the warm-up (at the start without one).
    pub(super) base: Snapshot,
    pub(super) series: Series,
    /// Timed mode: the clock, with the latencies of the measured window.
    pub(super) clock: Option<Clock>,
    /// Several flows: each one's measured requests (empty with one).
    pub(super) flows: Vec<FlowStats>,
}

/// The replay loop's state between requests.
struct Loop<'a> {
    done: u64,
    warmup: u64,
    every: u64,
    next_sample: u64,
    /// The request count at which [`Loop::event`] is next due.
    next_event: u64,
    series: Series,
    base: Snapshot,
    total: u64,
    timing: &'a NandConfig,
    /// Timed mode's clock (None: counts mode).
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

/// One request (with a prefetch hint for one a few places ahead), then whatever is due after it
/// ([`Loop::event`]).
#[inline(always)]
fn one(
    sim: &mut Sim,
    lp: &mut Loop,
    req: &Request,
    ahead_offset_bytes: Option<u64>,
    at: At,
    progress: &mut dyn Progress,
) -> Result<()> {
    if let Some(a) = ahead_offset_bytes {
        // The first page of a request a few places ahead (as the address map "none" places it;
        // under other maps the hint is merely useless).
        sim.buffer.prefetch(a >> sim.page_shift);
    }
    if req.len_bytes >= lp.huge_bytes {
        let note = huge_request_note(req, at, sim.page_shift);
        progress.note(&note);
        lp.huge = Some(note);
        lp.huge_bytes = u64::MAX;
    }
    let measured = lp.done >= lp.warmup;
    match (lp.feed.as_mut(), lp.clock.as_mut(), lp.interface.as_mut()) {
        (Some(f), _, _) => f.push(sim, req, at, measured)?,
        (None, Some(c), None) => sim.timed_request(c, req, at, measured)?,
        (None, Some(c), Some(q)) => sim.submit(c, q, req, at, measured)?,
        (None, None, _) => sim.request(req, at)?,
    }
    lp.done += 1;
    if lp.done == lp.next_event {
        let mut clock = lp.clock.take();
        let due = lp.event(sim, clock.as_mut(), progress);
        lp.clock = clock;
        due?;
    }
    Ok(())
}

/// The replay loop as several flows' submissions drive it (`[[flows]]`).
struct FlowSubmissions<'a, 'b> {
    lp: &'a mut Loop<'b>,
    progress: &'a mut dyn Progress,
}

impl super::flows::Submissions for FlowSubmissions<'_, '_> {
    fn measured(&self) -> bool {
        self.lp.done >= self.lp.warmup
    }

    fn submitted(&mut self, sim: &mut Sim, clock: &mut Clock) -> Result<()> {
        self.lp.done += 1;
        if self.lp.done == self.lp.next_event {
            self.lp.event(sim, Some(clock), self.progress)?;
        }
        Ok(())
    }
}

impl Loop<'_> {
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
    fn event(
        &mut self,
        sim: &mut Sim,
        clock: Option<&mut Clock>,
        progress: &mut dyn Progress,
    ) -> Result<()> {
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
        if self.done.is_multiple_of(PROGRESS_EVERY) && !progress.update(self.done, self.total) {
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

/// Precondition `sim`, replay `src` (reopened for every further pass), flush the buffer and check
/// integrity. `scan` (the sizing pre-pass, if any) gives a trace's length for progress.
pub(super) fn replay(
    sim: &mut Sim,
    mut src: Source,
    resolved: &Config,
    scan: Option<&Scan>,
    progress: &mut dyn Progress,
    warnings: &mut Vec<String>,
    flows: Option<&FlowPlan>,
) -> Result<Replayed> {
    let check = sim.check;
    if resolved.run.precondition == "fill" {
        sim.precondition_fill()?;
    }
    // Timed mode starts on an idle device after the precondition.
    let clock = if resolved.run.mode == "timed" {
        sim.be.nand.set_logging(true);
        let mut c = Clock::new(resolved, crate::registry::build_scheduler(resolved)?);
        c.set_buffer_pages(sim.buffer_pages);
        sim.drain_to = c.drain.target();
        if c.drain.on() && !sim.buffer.drains() {
            let key = if resolved.buffer.drain_idle_us.is_some() {
                "buffer.drain_idle_us"
            } else {
                "buffer.drain_watermark"
            };
            return Err(SimError::config(
                key,
                format!(
                    "buffer.kind = \"{}\" does not drain in the background",
                    resolved.buffer.kind
                ),
            ));
        }
        Some(c)
    } else {
        None
    };
    let per_pass = match (&src, scan) {
        (Source::Synth(s), _) => s.len(),
        (_, Some(s)) => s.requests,
        _ => 0,
    };
    let total = per_pass * resolved.run.repeat as u64;
    let warmup = resolved.run.warmup_requests;
    let every = resolved.run.sample_every;
    // Known totals fail here, before the replay (the samples, the last one included, number
    // ⌈total / every⌉); otherwise `Series::push` stops the run at the limit.
    if every > 0 && total.div_ceil(every) > MAX_SAMPLES {
        return Err(SimError::config(
            "run.sample_every",
            format!("{every} gives more than {MAX_SAMPLES} samples over {total} requests; sample less often"),
        ));
    }
    let mut lp = Loop {
        done: 0,
        warmup,
        every,
        // Off: u64::MAX is never reached, so the replay loop only pays one comparison per request.
        next_sample: if every > 0 { every } else { u64::MAX },
        next_event: 0,
        series: Series::default(),
        base: sim.snapshot(),
        total,
        timing: &resolved.nand,
        interface: clock
            .as_ref()
            .and_then(|_| Interface::new(&resolved.run.scheduler)),
        clock,
        feed: None,
        huge: None,
        huge_bytes: HUGE_REQUEST_PAGES << sim.page_shift,
    };
    lp.next_event = lp.next_event();
    if let Some(plan) = flows {
        let Some(mut clock) = lp.clock.take() else {
            return Err(SimError::config(
                "flows",
                "several flows need run.mode = \"timed\"",
            ));
        };
        lp.total = plan.total;
        let mut subs = FlowSubmissions {
            lp: &mut lp,
            progress,
        };
        if !plan.stripes.is_empty() {
            clock.partition(resolved, &plan.stripes);
        }
        let (stats, notes) = super::flows::replay(sim, resolved, &mut clock, plan, &mut subs)?;
        warnings.extend(notes);
        lp.clock = Some(clock);
        return finish(sim, lp, 0, stats, check, progress);
    }
    if lp
        .clock
        .as_ref()
        .is_some_and(|c| usable(c, resolved.run.clock_thread, every))
    {
        lp.feed = lp.clock.take().map(Feed::start).transpose()?;
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
            if let Some(c) = lp.clock.as_mut() {
                c.new_pass();
            }
            if let Some(f) = lp.feed.as_mut() {
                f.send(sim, true)?;
            }
            src = match &parsed {
                Some(p) => Source::Kept(Kept::new(p)),
                None => open_source(resolved)?,
            };
        }
        loop {
            // Requests decoded ahead come as a run (binary traces): no per-request dispatch.
            let drained = src.drain_run(|req, ahead, line| {
                keeper.keep(req, line);
                one(sim, &mut lp, req, Some(ahead), At::Line(line), progress)
            })?;
            if drained > 0 {
                continue;
            }
            let Some(req) = src.next() else { break };
            let (req, at) = (req?, src.at());
            if let At::Line(line) = at {
                keeper.keep(&req, line);
            }
            one(sim, &mut lp, &req, None, at, progress)?;
        }
        if let (Some(c), Some(q)) = (lp.clock.as_mut(), lp.interface.as_mut()) {
            sim.drain(c, q)?;
        }
        if pass == 0 && parsed.is_none() {
            parsed = std::mem::replace(&mut keeper, Keeper::new(false)).finish(&src);
        }
        if pass == 0 {
            warnings.extend(src.read_warnings(resolved, "workload"));
            let (n, first) = src.skipped();
            skipped = n;
            if let Some(first) = first {
                warnings.push(format!(
                    "skipped {skipped} malformed records; first: {first}"
                ));
            }
        }
        if pass == 0 && lp.done == 0 {
            return Err(no_requests(resolved, src.lines(), src.format_name()));
        }
    }
    if let Some(f) = lp.feed.take() {
        lp.clock = Some(f.finish(sim)?);
    }
    warnings.extend(lp.huge.take());
    finish(sim, lp, skipped, Vec::new(), check, progress)
}

/// After the last request: the final flush (counted, not timed), the integrity check and the
/// last time-series row.
fn finish(
    sim: &mut Sim,
    lp: Loop,
    skipped: u64,
    flows: Vec<FlowStats>,
    check: bool,
    progress: &mut dyn Progress,
) -> Result<Replayed> {
    let Loop {
        done,
        warmup,
        every,
        total,
        base,
        mut series,
        timing,
        mut clock,
        ..
    } = lp;
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
    if check {
        sim.be.ftl.check_integrity(&sim.latest)?;
    }
    if every > 0 {
        // The last row is taken after the final flush; a row already at `done` is replaced.
        if series.columns.get("requests").and_then(|c| c.last()) == Some(&(done as f64)) {
            series.pop();
        }
        sim.sample(&mut series, done, true, &base, timing, clock.as_mut())?;
    }
    Ok(Replayed {
        done,
        warmup,
        skipped,
        base,
        series,
        clock,
        flows,
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
