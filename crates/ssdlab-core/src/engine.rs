//! Counts-mode engine: replays a workload through buffer → FTL → NAND and sums costs (no clock).
//!
//! Steps: validate and resolve the configuration (capacity from the workload's footprint when
//! "auto"), build the components through the registry, precondition, replay (with warm-up and
//! repeats), flush the buffer, check integrity, and compute the metrics.

use crate::buffer::{BufferParams, FlushSink, FlushUnit, WriteBuffer};
use crate::config::{Capacity, Config, NandConfig};
use crate::error::{Result, SimError};
use crate::ftl::{Ftl, FtlView, Shape, UnitPage};
use crate::metrics::{self, HostCounters, Measured};
use crate::nand::{Cause, Nand, NandCounters};
use crate::registry;
use crate::request::{Op, Request};
use crate::synth::Synth;
use crate::trace::{self, Format, TraceOptions, TraceReader};
use crate::units::{for_each_page, Geometry, Lpn, SectorMask};
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::BTreeMap;
use std::path::Path;

/// Progress callback: `done` requests of `total` (0 = unknown). Return false to cancel.
pub trait Progress {
    fn update(&mut self, done: u64, total: u64) -> bool;
}

impl<F: FnMut(u64, u64) -> bool> Progress for F {
    fn update(&mut self, done: u64, total: u64) -> bool {
        self(done, total)
    }
}

/// Progress sink that never cancels.
pub struct NoProgress;
impl Progress for NoProgress {
    fn update(&mut self, _: u64, _: u64) -> bool {
        true
    }
}

#[derive(Clone, Debug)]
pub struct RunResult {
    /// The fully resolved configuration (defaults filled in, "auto" values replaced).
    pub config: Config,
    pub metrics: BTreeMap<String, f64>,
    /// Distributions over the measured window, as (value, count) pairs in ascending value:
    /// "buffer.flushed_group_pages" (exact) and "buffer.group_update_interval" (log2 buckets:
    /// the value is the bucket's lower bound).
    pub histograms: BTreeMap<String, Vec<(u64, u64)>>,
    /// Time series (`run.sample_every`), as columns of equal length: "requests", "measured" and
    /// the [`SERIES_METRICS`] plus FTL counters and gauges and the buffer's policy gauges
    /// (docs/metrics.md). Empty when sampling is off.
    pub series: BTreeMap<String, Vec<f64>>,
    /// Non-fatal notes (e.g. skipped malformed records).
    pub warnings: Vec<String>,
}

/// Flushed-group statistics (seed 000 Fig 15–16): group sizes and the number of flushes between
/// two flushes of the same LBN.
struct GroupStats {
    /// Flush index + 1 of each LBN's last flush (0 = never flushed).
    last_flush: Vec<u64>,
    flushes: u64,
    size_counts: Vec<u64>,
    interval_log2: [u64; 64],
    interval_sum: u64,
    intervals: u64,
}

impl GroupStats {
    fn new(logical_blocks: u64, ppb: u64) -> Result<Self> {
        Ok(GroupStats {
            last_flush: crate::units::alloc_vec(logical_blocks, 0, "the group flush index")?,
            flushes: 0,
            size_counts: vec![0; ppb as usize + 1],
            interval_log2: [0; 64],
            interval_sum: 0,
            intervals: 0,
        })
    }

    #[inline]
    fn record(&mut self, lbn: u64, pages: usize) {
        self.flushes += 1;
        if let Some(n) = self.size_counts.get_mut(pages) {
            *n += 1;
        }
        let slot = &mut self.last_flush[lbn as usize];
        if *slot != 0 {
            let interval = self.flushes - *slot;
            self.interval_log2[63 - interval.leading_zeros() as usize] += 1;
            self.interval_sum += interval;
            self.intervals += 1;
        }
        *slot = self.flushes;
    }

    /// Forget the distributions (not the last-flush indexes) at the end of the warm-up.
    fn reset_counts(&mut self) {
        self.size_counts.iter_mut().for_each(|c| *c = 0);
        self.interval_log2 = [0; 64];
        self.interval_sum = 0;
        self.intervals = 0;
    }

    fn histograms(&self) -> BTreeMap<String, Vec<(u64, u64)>> {
        let sizes = self
            .size_counts
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(v, &c)| (v as u64, c));
        let ints = self
            .interval_log2
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(k, &c)| (1u64 << k, c));
        BTreeMap::from([
            ("buffer.flushed_group_pages".to_string(), sizes.collect()),
            ("buffer.group_update_interval".to_string(), ints.collect()),
        ])
    }
}

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
struct Series {
    rows: usize,
    columns: BTreeMap<String, Vec<f64>>,
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

enum Source {
    Trace(TraceReader),
    /// A trace parsed on a second thread (`run.reader_thread`), handed over in batches.
    Pipelined(Pipelined),
    Synth(Box<Synth>),
}

impl Source {
    #[inline(always)]
    fn next(&mut self) -> Option<Result<Request>> {
        match self {
            Source::Trace(r) => r.next(),
            Source::Pipelined(p) => p.next(),
            Source::Synth(s) => s.next(),
        }
    }
    /// Trace lines read so far (0 for a synthetic workload).
    fn lines(&self) -> u64 {
        match self {
            Source::Trace(r) => r.line(),
            Source::Pipelined(p) => p.line,
            Source::Synth(_) => 0,
        }
    }
    fn position(&self) -> String {
        match self {
            Source::Trace(r) => format!("line {}", r.line()),
            Source::Pipelined(p) => format!("line {}", p.line),
            Source::Synth(_) => "synthetic workload".into(),
        }
    }
    /// Malformed records skipped so far and the first one's message.
    fn skipped(&self) -> (u64, Option<String>) {
        match self {
            Source::Trace(t) => (t.skipped(), t.first_skipped()),
            Source::Pipelined(p) => (p.skipped, p.first_skipped.clone()),
            Source::Synth(_) => (0, None),
        }
    }
    fn format_name(&self) -> Option<&'static str> {
        match self {
            Source::Trace(t) => Some(t.format().name()),
            Source::Pipelined(p) => Some(p.format.name()),
            Source::Synth(_) => None,
        }
    }
}

const BATCH: usize = 4096;

enum Msg {
    /// Requests with their trace line numbers.
    Batch(Vec<(Request, u64)>),
    Error(SimError),
    End {
        skipped: u64,
        first_skipped: Option<String>,
        /// Lines read in all (the last request's line can be earlier).
        lines: u64,
    },
}

/// Parses a trace on its own thread; the order of requests is unchanged, so results are
/// identical to reading on the simulation thread. Dropping it stops the reader.
struct Pipelined {
    rx: std::sync::mpsc::Receiver<Msg>,
    batch: std::vec::IntoIter<(Request, u64)>,
    line: u64,
    format: Format,
    skipped: u64,
    first_skipped: Option<String>,
    done: bool,
}

impl Pipelined {
    fn start(mut reader: TraceReader) -> Pipelined {
        let format = reader.format();
        let (tx, rx) = std::sync::mpsc::sync_channel::<Msg>(8);
        std::thread::spawn(move || loop {
            let mut batch = Vec::with_capacity(BATCH);
            while batch.len() < BATCH {
                match reader.next() {
                    Some(Ok(r)) => batch.push((r, reader.line())),
                    Some(Err(e)) => {
                        let _ = tx.send(Msg::Batch(batch));
                        let _ = tx.send(Msg::Error(e));
                        return;
                    }
                    None => {
                        let _ = tx.send(Msg::Batch(batch));
                        let _ = tx.send(Msg::End {
                            skipped: reader.skipped(),
                            first_skipped: reader.first_skipped(),
                            lines: reader.line(),
                        });
                        return;
                    }
                }
            }
            if tx.send(Msg::Batch(batch)).is_err() {
                return; // the simulation stopped
            }
        });
        Pipelined {
            rx,
            batch: Vec::new().into_iter(),
            line: 0,
            format,
            skipped: 0,
            first_skipped: None,
            done: false,
        }
    }

    #[inline]
    fn next(&mut self) -> Option<Result<Request>> {
        loop {
            if let Some((r, line)) = self.batch.next() {
                self.line = line;
                return Some(Ok(r));
            }
            if self.done {
                return None;
            }
            match self.rx.recv() {
                Ok(Msg::Batch(b)) => self.batch = b.into_iter(),
                Ok(Msg::Error(e)) => {
                    self.done = true;
                    return Some(Err(e));
                }
                Ok(Msg::End {
                    skipped,
                    first_skipped,
                    lines,
                }) => {
                    self.done = true;
                    self.line = lines;
                    self.skipped = skipped;
                    self.first_skipped = first_skipped;
                }
                Err(_) => {
                    self.done = true;
                    return Some(Err(SimError::Invalid(
                        "the trace reader thread stopped unexpectedly".into(),
                    )));
                }
            }
        }
    }
}

fn trace_options(cfg: &Config) -> Result<TraceOptions> {
    let w = &cfg.workload;
    Ok(TraceOptions {
        format: match &w.format {
            Some(f) => Some(
                Format::from_name(f)
                    .map_err(|e| SimError::config("workload.format", e.to_string()))?,
            ),
            None => None,
        },
        device: w.device,
        skip_invalid: w.skip_invalid,
        blkparse_action: w.blkparse_action.as_ref().and_then(|s| s.chars().next()),
        generic: w.generic.clone(),
    })
}

fn seed_of(cfg: &Config) -> u64 {
    cfg.workload.seed.unwrap_or(cfg.run.seed)
}

fn open_source(cfg: &Config) -> Result<Source> {
    if cfg.workload.kind == "trace" {
        let path = cfg.workload.path.as_deref().unwrap_or_default();
        let reader = trace::open(Path::new(path), &trace_options(cfg)?)?;
        if cfg.run.reader_thread {
            Ok(Source::Pipelined(Pipelined::start(reader)))
        } else {
            Ok(Source::Trace(reader))
        }
    } else {
        Ok(Source::Synth(Box::new(Synth::new(
            &cfg.workload,
            seed_of(cfg),
        )?)))
    }
}

/// What a pre-pass over a trace learns.
#[derive(Default)]
struct Scan {
    requests: u64,
    max_end_bytes: u64,
    distinct_lbns: u64,
    footprint_pages: u64,
    /// Trace lines read and the format they were read as.
    lines: u64,
    format: Option<&'static str>,
}

fn scan_trace(cfg: &Config, page_bytes: u64, ppb: u64) -> Result<Scan> {
    let mut src = open_source(cfg)?;
    let mut s = Scan::default();
    let mut lbns = FxHashSet::default();
    let mut pages = FxHashSet::default();
    while let Some(r) = src.next() {
        let r = r?;
        s.requests += 1;
        s.max_end_bytes = s.max_end_bytes.max(r.end_bytes());
        if r.len_bytes == 0 {
            continue;
        }
        let first = r.offset_bytes / page_bytes;
        let last = (r.end_bytes() - 1) / page_bytes;
        for p in first..=last {
            lbns.insert(p / ppb);
            if r.op == Op::Write {
                pages.insert(p);
            }
        }
    }
    s.distinct_lbns = lbns.len() as u64;
    s.footprint_pages = pages.len() as u64;
    s.lines = src.lines();
    s.format = src.format_name();
    Ok(s)
}

/// How host addresses become device LPNs.
enum AddressMap {
    None,
    Fold,
    Compact(FxHashMap<u64, u64>),
}

/// The buffer's way down: FTL + NAND + flush accounting.
struct Backend {
    ftl: Box<dyn Ftl>,
    nand: Nand,
    ppb: u64,
    full: SectorMask,
    /// `buffer.padding_fill = "all"`: padded flushes program every page of the block.
    pad_fill: bool,
    scratch: Vec<UnitPage>,
    host: HostCounters,
    groups: GroupStats,
}

impl FlushSink for Backend {
    fn flush(&mut self, unit: &FlushUnit) -> Result<()> {
        self.host.flushes += 1;
        self.host.flushed_pages += unit.pages.len() as u64;
        self.groups.record(unit.lbn, unit.pages.len());
        let first = unit.lbn * self.ppb;
        let whole = unit.padded || unit.pages.len() as u64 == self.ppb;
        if let ([p], false) = (unit.pages, whole) {
            // Fast path for page-level buffers: one page, no padding.
            if p.mask != self.full {
                self.ftl
                    .read(first + p.offset as u64, Cause::Rmw, &mut self.nand);
            }
            self.host.ftl_pages += 1;
            let page = [UnitPage {
                offset: p.offset,
                version: p.version,
                cause: Cause::Host,
            }];
            return self
                .ftl
                .write_pages(unit.lbn, &page, unit.hint, &mut self.nand);
        }
        self.scratch.clear();
        let mut pages = unit.pages.iter().peekable();
        let push_buffered = |be: &mut Backend, p: &crate::buffer::PageWrite| {
            // A partial page is merged with its old copy on flash: one read-modify-write read.
            if p.mask != be.full {
                be.ftl
                    .read(first + p.offset as u64, Cause::Rmw, &mut be.nand);
            }
            be.scratch.push(UnitPage {
                offset: p.offset,
                version: p.version,
                cause: Cause::Host,
            });
        };
        if unit.padded {
            self.host.padded_flushes += 1;
            for off in 0..self.ppb as u32 {
                if let Some(p) = pages.next_if(|p| p.offset == off) {
                    push_buffered(self, p);
                } else {
                    let lpn = first + off as u64;
                    if self.ftl.read(lpn, Cause::Pad, &mut self.nand) {
                        let version = self.ftl.version_of(lpn);
                        self.scratch.push(UnitPage {
                            offset: off,
                            version,
                            cause: Cause::Pad,
                        });
                    }
                }
            }
        } else {
            for p in pages {
                push_buffered(self, p);
            }
        }
        // A full or padded group goes down as a whole block (the FTL switch-merges it); filler
        // for the offsets that hold no data counts as pages handed to the FTL.
        let shape = if whole {
            let fill = unit.padded && self.pad_fill;
            if fill {
                let filler = self.ppb - self.scratch.len() as u64;
                self.host.pad_filler_pages += filler;
                self.host.ftl_pages += filler;
            }
            Shape::Block { fill }
        } else {
            Shape::Pages
        };
        self.host.ftl_pages += self.scratch.len() as u64;
        let scratch = std::mem::take(&mut self.scratch);
        let r = self
            .ftl
            .write_unit(unit.lbn, &scratch, shape, unit.hint, &mut self.nand);
        self.scratch = scratch;
        r
    }

    fn view(&self) -> &dyn FtlView {
        &*self.ftl
    }
}

struct Snapshot {
    host: HostCounters,
    nand: NandCounters,
    erases: Vec<u32>,
    ftl: Vec<(&'static str, u64)>,
}

struct Sim {
    geo: Geometry,
    map: AddressMap,
    buffer: Box<dyn WriteBuffer>,
    be: Backend,
    /// Latest host version of every LPN (integrity checking only; 0 = none).
    latest: Vec<u32>,
    check: bool,
    version: u32,
}

impl Sim {
    fn snapshot(&self) -> Snapshot {
        Snapshot {
            host: self.be.host.clone(),
            nand: self.be.nand.counters.clone(),
            erases: self.be.nand.erase_counts.clone(),
            ftl: self.be.ftl.counters(),
        }
    }

    /// The metrics of everything since `base` (the counters' difference; gauges as they are
    /// now), with the buffer's policy gauges. Used for the end-of-run metrics and every sample.
    fn metrics_since(&mut self, base: &Snapshot, timing: &NandConfig) -> BTreeMap<String, f64> {
        let end = self.snapshot();
        let erases_per_block: Vec<u32> = end
            .erases
            .iter()
            .zip(&base.erases)
            .map(|(a, b)| a - b)
            .collect();
        let ftl_counters: Vec<(&'static str, u64)> = end
            .ftl
            .iter()
            .map(|(k, v)| {
                (
                    *k,
                    v - base
                        .ftl
                        .iter()
                        .find(|(bk, _)| bk == k)
                        .map_or(0, |(_, bv)| *bv),
                )
            })
            .collect();
        let mut m = metrics::finish(Measured {
            host: end.host.minus(&base.host),
            nand: end.nand.minus(&base.nand),
            erases_per_block,
            ftl_counters,
            ftl_gauges: self.be.ftl.gauges(),
            timing,
        });
        for (k, v) in self.buffer.gauges(&*self.be.ftl) {
            m.insert(k.to_string(), v);
        }
        m
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
                || SERIES_METRICS.contains(&k.as_str())
                || ftl.contains(&k.as_str());
            if keep {
                row.push((k, v));
            }
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

    #[inline(always)]
    fn map_lpn(&mut self, lpn: Lpn, req: &Request, src: &Source) -> Result<Lpn> {
        let lp = self.geo.logical_pages;
        match &mut self.map {
            AddressMap::None => {
                if lpn >= lp {
                    return Err(SimError::Capacity(format!(
                        "request at {} (offset {} B, {} B) ends beyond the device's logical capacity of {} B; \
                         set workload.address_map = \"fold\" or \"compact\", or raise device.logical_bytes",
                        src.position(),
                        req.offset_bytes,
                        req.len_bytes,
                        self.geo.logical_bytes()
                    )));
                }
                Ok(lpn)
            }
            AddressMap::Fold => Ok(lpn % lp),
            AddressMap::Compact(m) => {
                let ppb = self.geo.pages_per_block;
                let next = m.len() as u64;
                let dense = *m.entry(lpn / ppb).or_insert(next);
                let out = dense * ppb + lpn % ppb;
                if out >= lp {
                    return Err(SimError::Capacity(format!(
                        "request at {}: the workload touches more than the device's {} logical blocks; \
                         raise device.logical_bytes (or use \"auto\")",
                        src.position(),
                        self.geo.logical_blocks()
                    )));
                }
                Ok(out)
            }
        }
    }

    fn precondition_fill(&mut self) -> Result<()> {
        let ppb = self.geo.pages_per_block;
        let mut unit = Vec::with_capacity(ppb as usize);
        for lbn in 0..self.geo.logical_blocks() {
            unit.clear();
            for off in 0..ppb {
                let v = self.next_version()?;
                if self.check {
                    self.latest[(lbn * ppb + off) as usize] = v;
                }
                unit.push(UnitPage {
                    offset: off as u32,
                    version: v,
                    cause: Cause::Host,
                });
            }
            let whole = Shape::Block { fill: false };
            self.be
                .ftl
                .write_unit(lbn, &unit, whole, 0, &mut self.be.nand)?;
        }
        Ok(())
    }

    #[inline(always)]
    fn request(&mut self, req: &Request, src: &Source) -> Result<()> {
        let spp = crate::units::Divisor::new(self.geo.sectors_per_page());
        match req.op {
            Op::Write => {
                self.be.host.write_requests += 1;
                self.be.host.write_bytes += req.len_bytes;
                self.buffer.begin_request();
                for_each_page(req.offset_bytes, req.len_bytes, spp, |lpn, mask| {
                    let lpn = self.map_lpn(lpn, req, src)?;
                    let v = self.next_version()?;
                    if self.check {
                        self.latest[lpn as usize] = v;
                    }
                    let h = &mut self.be.host;
                    h.write_pages += 1;
                    h.write_sectors += mask.count_ones() as u64;
                    let before = self.buffer.write(lpn, mask, v, req.dev, &mut self.be)?;
                    if before != 0 {
                        let h = &mut self.be.host;
                        h.write_hit_pages += 1;
                        h.write_hit_sectors += (before & mask).count_ones() as u64;
                    }
                    Ok(())
                })
            }
            Op::Read => {
                self.be.host.read_requests += 1;
                self.be.host.read_bytes += req.len_bytes;
                for_each_page(req.offset_bytes, req.len_bytes, spp, |lpn, mask| {
                    let lpn = self.map_lpn(lpn, req, src)?;
                    self.be.host.read_pages += 1;
                    if self.buffer.read(lpn, mask, &mut self.be)? & mask == mask {
                        self.be.host.read_hit_pages += 1;
                    } else {
                        self.be.ftl.read(lpn, Cause::Host, &mut self.be.nand);
                    }
                    Ok(())
                })
            }
            Op::Trim => {
                self.be.host.trim_requests += 1;
                let full = self.geo.full_mask();
                for_each_page(req.offset_bytes, req.len_bytes, spp, |lpn, mask| {
                    // Only whole pages can be discarded.
                    if mask != full {
                        return Ok(());
                    }
                    let lpn = self.map_lpn(lpn, req, src)?;
                    self.be.host.trim_pages += 1;
                    self.buffer.trim(lpn);
                    self.be.ftl.trim(lpn);
                    if self.check {
                        self.latest[lpn as usize] = 0;
                    }
                    Ok(())
                })
            }
        }
    }
}

/// Resolve "auto" and derived values; returns the resolved config, geometry and buffer pages.
/// What was accepted but probably not meant goes into `warnings`.
fn resolve(
    cfg: &Config,
    warnings: &mut Vec<String>,
) -> Result<(Config, Geometry, u64, Option<Scan>)> {
    let mut r = cfg.clone();
    let page_bytes = cfg.device.page_bytes.0;
    let ppb = cfg.device.pages_per_block;
    let is_trace = cfg.workload.kind == "trace";
    let need_scan =
        is_trace && (cfg.device.logical_bytes == Capacity::Auto || cfg.buffer.fraction.is_some());
    let scan = if need_scan {
        Some(scan_trace(cfg, page_bytes, ppb)?)
    } else {
        None
    };
    if let Some(s) = &scan {
        if s.requests == 0 {
            return Err(no_requests(cfg, s.lines, s.format));
        }
    }
    let logical_bytes = match cfg.device.logical_bytes {
        Capacity::Bytes(b) => b,
        Capacity::Auto => match (&scan, cfg.workload.address_map.as_str()) {
            (Some(s), "compact") => s.distinct_lbns * ppb * page_bytes,
            (Some(s), _) => s.max_end_bytes,
            (None, _) => cfg.workload.footprint_bytes.0,
        },
    };
    if logical_bytes == 0 {
        return Err(SimError::config(
            "device.logical_bytes",
            "the device would have no logical pages",
        ));
    }
    let mut logical_blocks = logical_bytes.div_ceil(page_bytes).div_ceil(ppb);
    if cfg.device.logical_bytes == Capacity::Auto {
        // An auto-sized device is also large enough for the FTL's reserve and open blocks at
        // this ρ (a tiny trace would otherwise leave no spare block to run GC with).
        // The spare-block need comes from the FTL's registry entry (it may grow with the device).
        for _ in 0..64 {
            let spare_needed = registry::ftl_spare_blocks(&r, logical_blocks)?;
            let need = (spare_needed as f64 / cfg.device.op).ceil() as u64;
            if need <= logical_blocks {
                break;
            }
            logical_blocks = need;
        }
    }
    registry::resolve_ftl(&mut r, logical_blocks)?;
    let logical_pages = logical_blocks * ppb;
    let physical_blocks = ((logical_blocks as f64) * (1.0 + cfg.device.op)).ceil() as u64;
    let geo = Geometry {
        page_bytes,
        pages_per_block: ppb,
        logical_pages,
        physical_blocks,
    };
    r.device.logical_bytes = Capacity::Bytes(geo.logical_bytes());
    let footprint_pages = match &scan {
        Some(s) => s.footprint_pages,
        None if is_trace => 0,
        None => cfg.workload.footprint_bytes.0.div_ceil(page_bytes),
    };
    let buffer_pages = match cfg.buffer.fraction {
        Some(f) => (footprint_pages as f64 * f).floor() as u64,
        None => cfg.buffer.bytes.0 / page_bytes,
    };
    if cfg.buffer.kind != "none" && buffer_pages == 0 {
        return Err(SimError::config(
            if cfg.buffer.fraction.is_some() { "buffer.fraction" } else { "buffer.bytes" },
            format!("the buffer holds less than one {page_bytes}-byte page (use buffer.kind = \"none\" for no buffer)"),
        ));
    }
    r.buffer.bytes = crate::units::Size(buffer_pages * page_bytes);
    let g = crate::units::grouped;
    if cfg.buffer.kind != "none" && cfg.buffer.fraction.is_none() {
        let asked = cfg.buffer.bytes.0;
        if !asked.is_multiple_of(page_bytes) {
            warnings.push(format!(
                "buffer.bytes = {} bytes is rounded down to {} page{} = {} bytes",
                g(asked),
                g(buffer_pages),
                if buffer_pages == 1 { "" } else { "s" },
                g(buffer_pages * page_bytes)
            ));
        }
    }
    if cfg.buffer.kind != "none" && buffer_pages >= logical_pages {
        warnings.push(format!(
            "the buffer ({} pages) is as large as the device ({} logical pages): every write can stay in it",
            g(buffer_pages),
            g(logical_pages)
        ));
    }
    // A whole-device fill followed by a trace that touches a sliver of it measures almost no GC
    // (compact sizing already fits the device to the trace).
    if let Some(s) = &scan {
        if cfg.device.logical_bytes == Capacity::Auto
            && cfg.workload.address_map != "compact"
            && cfg.run.precondition == "fill"
            && s.footprint_pages.saturating_mul(100) < logical_pages
        {
            let bytes = geo.logical_bytes() as f64;
            let size = if bytes >= (1u64 << 30) as f64 {
                format!("{:.1} GiB", bytes / (1u64 << 30) as f64)
            } else {
                format!("{:.1} MiB", bytes / (1u64 << 20) as f64)
            };
            warnings.push(format!(
                "the trace writes {} pages, under 1% of the automatically sized device ({} pages = {size}, \
                 sized from the highest address); set workload.address_map = \"compact\" to size the device \
                 to the blocks the trace touches",
                g(s.footprint_pages),
                g(logical_pages),
            ));
        }
    }
    if !is_trace {
        r.workload.seed = Some(seed_of(cfg));
    }
    Ok((r, geo, buffer_pages, scan))
}

/// The error for a trace that yielded no request: how much was read, as what, and what
/// detection makes of the file when the format was declared.
fn no_requests(cfg: &Config, lines: u64, format: Option<&str>) -> SimError {
    let Some(path) = &cfg.workload.path else {
        return SimError::Invalid("the workload has no requests".into());
    };
    if cfg.workload.device.is_some() {
        return SimError::Invalid(format!(
            "trace {path} has no requests for the selected workload.device"
        ));
    }
    let format = format.unwrap_or("?");
    let hint = match (&cfg.workload.format, trace::detect(Path::new(path))) {
        (Some(_), Ok(f)) if f.name() != format => {
            format!("; detection suggests format `{}`", f.name())
        }
        (Some(_), Err(_)) => "; detection recognises no format either".to_string(),
        _ => String::new(),
    };
    SimError::Invalid(format!(
        "trace {path} has no requests: read {} lines, none parsed as format `{format}`{hint}",
        crate::units::grouped(lines)
    ))
}

/// MemAvailable from /proc/meminfo, in bytes (None where unknown).
fn mem_available_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Refuse a device whose mapping tables cannot fit in memory, before the OS kills the process.
fn check_memory(geo: &Geometry, check: bool) -> Result<()> {
    let per_page = if check { 8 } else { 4 };
    let need = per_page * (geo.logical_pages + geo.physical_pages());
    if let Some(avail) = mem_available_bytes() {
        if need > avail {
            let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
            return Err(SimError::config(
                "device.logical_bytes",
                format!(
                    "a {:.1} GiB device needs about {:.1} GiB of mapping tables, but only {:.1} GiB of memory is \
                     available; use a smaller device or workload.address_map = \"compact\"",
                    gib(geo.logical_bytes()),
                    gib(need),
                    gib(avail)
                ),
            ));
        }
    }
    Ok(())
}

/// Run one simulation.
pub fn simulate(cfg: &Config, progress: &mut dyn Progress) -> Result<RunResult> {
    cfg.validate()?;
    let mut warnings = cfg.warnings.clone();
    let (mut resolved, geo, buffer_pages, scan) = resolve(cfg, &mut warnings)?;
    // Show the padding policy actually used ("auto" = the buffer's default).
    resolved.buffer.padding = registry::resolved_padding(&resolved).to_string();
    let check = cfg.run.check_integrity;
    check_memory(&geo, check)?;
    let ftl = registry::build_ftl(&resolved, &geo)?;
    let padding = registry::build_padding(&resolved)?;
    let buffer = registry::build_buffer(
        &resolved,
        BufferParams {
            capacity_pages: buffer_pages,
            pages_per_block: geo.pages_per_block,
            padding,
        },
    )?;
    let mut src = open_source(&resolved)?;
    if let Some(name) = src.format_name() {
        resolved.workload.format = Some(name.to_string());
    }
    let map = match resolved.workload.address_map.as_str() {
        "fold" => AddressMap::Fold,
        "compact" => AddressMap::Compact(FxHashMap::default()),
        _ => AddressMap::None,
    };
    let mut sim = Sim {
        be: Backend {
            ftl,
            nand: Nand::new(geo.physical_blocks),
            ppb: geo.pages_per_block,
            full: geo.full_mask(),
            pad_fill: resolved.buffer.padding_fill == "all",
            scratch: Vec::with_capacity(geo.pages_per_block as usize),
            host: HostCounters::default(),
            groups: GroupStats::new(geo.logical_blocks(), geo.pages_per_block)?,
        },
        latest: if check {
            crate::units::alloc_vec(geo.logical_pages, 0, "integrity versions")?
        } else {
            Vec::new()
        },
        geo,
        map,
        buffer,
        check,
        version: 0,
    };
    if resolved.run.precondition == "fill" {
        sim.precondition_fill()?;
    }
    let per_pass = match (&src, &scan) {
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
    // Off: u64::MAX is never reached, so the replay loop only pays one comparison per request.
    let mut next_sample = if every > 0 { every } else { u64::MAX };
    let mut series = Series::default();
    let timing = &resolved.nand;
    let mut base = sim.snapshot();
    let mut done: u64 = 0;
    let mut skipped = 0u64;
    for pass in 0..resolved.run.repeat {
        if pass > 0 {
            src = open_source(&resolved)?;
        }
        while let Some(req) = src.next() {
            let req = req?;
            if done == warmup && warmup > 0 {
                base = sim.snapshot();
                sim.be.groups.reset_counts();
            }
            sim.request(&req, &src)?;
            done += 1;
            if done == next_sample {
                sim.sample(&mut series, done, done > warmup, &base, timing)?;
                next_sample += every;
            }
            if done.is_multiple_of(PROGRESS_EVERY) && !progress.update(done, total) {
                return Err(SimError::Cancelled);
            }
        }
        if pass == 0 {
            let (n, first) = src.skipped();
            skipped = n;
            if let Some(first) = first {
                warnings.push(format!(
                    "skipped {skipped} malformed records; first: {first}"
                ));
            }
        }
        if pass == 0 && done == 0 {
            return Err(no_requests(&resolved, src.lines(), src.format_name()));
        }
    }
    if warmup >= done {
        return Err(SimError::config(
            "run.warmup_requests",
            format!(
                "{warmup} warm-up requests leave nothing to measure ({done} requests in the run)"
            ),
        ));
    }
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
        sim.sample(&mut series, done, true, &base, timing)?;
    }
    let mut m = sim.metrics_since(&base, timing);
    m.insert("run.requests".into(), done as f64);
    m.insert("run.measured_requests".into(), (done - warmup) as f64);
    m.insert("trace.skipped_records".into(), skipped as f64);
    m.insert("device.logical_pages".into(), sim.geo.logical_pages as f64);
    m.insert(
        "device.physical_blocks".into(),
        sim.geo.physical_blocks as f64,
    );
    m.insert("buffer.capacity_pages".into(), buffer_pages as f64);
    let g = &sim.be.groups;
    m.insert("buffer.flushed_groups".into(), m["buffer.flushes"]);
    m.insert(
        "buffer.group_update_interval.mean".into(),
        if g.intervals > 0 {
            g.interval_sum as f64 / g.intervals as f64
        } else {
            f64::NAN
        },
    );
    let histograms = g.histograms();
    Ok(RunResult {
        config: resolved,
        metrics: m,
        histograms,
        series: series.columns,
        warnings,
    })
}
