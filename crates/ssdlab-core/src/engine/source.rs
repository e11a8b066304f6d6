//! Workload source: a trace read on the simulation thread or on a reader thread
//! (`run.reader_thread`), or a synthetic workload; and the pre-pass over a trace that sizes the
//! device and the buffer.

use crate::config::Config;
use crate::error::{Result, SimError};
use crate::request::{Op, Request};
use crate::synth::Synth;
use crate::trace::{self, Format, TraceOptions, TraceReader, VolumeTally, LOOKAHEAD};
use rustc_hash::FxHashSet;
use std::path::Path;

// One source a run: its size costs nothing, while boxing the reader would add an indirection
// to every request.
#[allow(clippy::large_enum_variant)]
pub(super) enum Source {
    Trace(TraceReader),
    /// A trace parsed on a second thread (`run.reader_thread`), handed over in batches.
    Pipelined(Pipelined),
    /// A trace already parsed (by the sizing pre-pass or an earlier pass), replayed from memory.
    Kept(Kept),
    Synth(Box<Synth>),
}

/// With `run.repeat`, or after the sizing pre-pass, a trace's requests (with their lines) are
/// kept in memory so the next pass skips parsing, unless they take more than this.
const KEEP_MAX_BYTES: usize = 256 << 20;
const KEEP_MAX_REQUESTS: usize = KEEP_MAX_BYTES / std::mem::size_of::<(Request, u64)>();

/// A parsed trace: its requests with their lines, and what parsing it reported.
pub(super) struct Parsed {
    reqs: Vec<(Request, u64)>,
    lines: u64,
    format: Option<&'static str>,
    skipped: u64,
    first_skipped: Option<String>,
    tally: VolumeTally,
}

/// Collects a pass's requests into a [`Parsed`] trace, giving up once there are too many.
pub(super) struct Keeper(Option<Vec<(Request, u64)>>);

impl Keeper {
    pub(super) fn new(on: bool) -> Keeper {
        Keeper(on.then(Vec::new))
    }
    #[inline(always)]
    pub(super) fn keep(&mut self, req: &Request, line: u64) {
        if let Some(v) = &mut self.0 {
            if v.len() < KEEP_MAX_REQUESTS {
                v.push((*req, line));
            } else {
                self.0 = None;
            }
        }
    }
    /// The whole pass, once `src` has ended (None if it was too long or not kept).
    pub(super) fn finish(self, src: &Source) -> Option<std::rc::Rc<Parsed>> {
        let (skipped, first_skipped) = src.skipped();
        self.0.map(|reqs| {
            std::rc::Rc::new(Parsed {
                reqs,
                lines: src.lines(),
                format: src.format_name(),
                skipped,
                first_skipped,
                tally: src.tally().cloned().unwrap_or_default(),
            })
        })
    }
}

/// A replay of a [`Parsed`] trace.
pub(super) struct Kept {
    parsed: std::rc::Rc<Parsed>,
    pos: usize,
}

impl Kept {
    pub(super) fn new(parsed: &std::rc::Rc<Parsed>) -> Kept {
        Kept {
            parsed: parsed.clone(),
            pos: 0,
        }
    }
    /// Every request left, with the offset of the one [`LOOKAHEAD`] places on (a prefetch
    /// hint) and its line, as [`TraceReader::drain_run`] hands them.
    #[inline(always)]
    fn drain_run(&mut self, mut f: impl FnMut(&Request, u64, u64) -> Result<()>) -> Result<usize> {
        let reqs = &self.parsed.reqs;
        let start = self.pos;
        while let Some((req, line)) = reqs.get(self.pos) {
            self.pos += 1;
            let ahead = reqs
                .get(self.pos + LOOKAHEAD - 1)
                .unwrap_or(&reqs[reqs.len() - 1]);
            f(req, ahead.0.offset_bytes, *line)?;
        }
        Ok(self.pos - start)
    }
    /// As [`TraceReader::line`]: the last request's line (all lines read, once none is left).
    fn line(&self) -> u64 {
        match (self.pos, self.parsed.reqs.is_empty()) {
            (_, true) => self.parsed.lines,
            (0, false) => 0,
            (p, false) => self.parsed.reqs[p - 1].1,
        }
    }
    pub(super) fn parsed(&self) -> &std::rc::Rc<Parsed> {
        &self.parsed
    }
}

impl Source {
    #[inline]
    pub(super) fn next(&mut self) -> Option<Result<Request>> {
        match self {
            Source::Trace(r) => r.next(),
            Source::Pipelined(p) => p.next(),
            Source::Kept(k) => k.parsed.reqs.get(k.pos).map(|&(r, _)| {
                k.pos += 1;
                Ok(r)
            }),
            Source::Synth(s) => s.next(),
        }
    }
    /// Requests decoded ahead, handed to `f` with their lines (see [`TraceReader::drain_run`]).
    #[inline(always)]
    pub(super) fn drain_run(
        &mut self,
        f: impl FnMut(&Request, u64, u64) -> Result<()>,
    ) -> Result<usize> {
        match self {
            Source::Trace(r) => r.drain_run(f),
            Source::Kept(k) => k.drain_run(f),
            _ => Ok(0),
        }
    }
    /// Where the last request came from, for error messages.
    pub(super) fn at(&self) -> At {
        match self {
            Source::Synth(_) => At::Synthetic,
            _ => At::Line(self.lines()),
        }
    }
    /// Trace lines read so far (0 for a synthetic workload).
    pub(super) fn lines(&self) -> u64 {
        match self {
            Source::Trace(r) => r.line(),
            Source::Pipelined(p) => p.line,
            Source::Kept(k) => k.line(),
            Source::Synth(_) => 0,
        }
    }
    /// Malformed records skipped so far and the first one's message.
    pub(super) fn skipped(&self) -> (u64, Option<String>) {
        match self {
            Source::Trace(t) => (t.skipped(), t.first_skipped()),
            Source::Pipelined(p) => (p.skipped, p.first_skipped.clone()),
            Source::Kept(k) => (k.parsed.skipped, k.parsed.first_skipped.clone()),
            Source::Synth(_) => (0, None),
        }
    }
    /// What was counted of the trace's requests read so far (None: synthetic).
    fn tally(&self) -> Option<&VolumeTally> {
        match self {
            Source::Trace(t) => Some(t.tally()),
            Source::Pipelined(p) => Some(&p.tally),
            Source::Kept(k) => Some(&k.parsed.tally),
            Source::Synth(_) => None,
        }
    }
    /// Warnings about how the trace read, once a pass has ended (`key`: its workload's keys):
    /// several volumes merged without `workload.volumes` or `workload.device` saying so;
    /// requests mostly 1 MiB or more.
    pub(super) fn read_warnings(&self, cfg: &Config, key: &str) -> Vec<String> {
        let unasked = cfg.workload.volumes.is_none() && cfg.workload.device.is_none();
        self.tally()
            .map_or_else(Vec::new, |t| t.warnings(key, unasked, self.format_name()))
    }
    pub(super) fn format_name(&self) -> Option<&'static str> {
        match self {
            Source::Trace(t) => Some(t.format().name()),
            Source::Pipelined(p) => Some(p.format.name()),
            Source::Kept(k) => k.parsed.format,
            Source::Synth(_) => None,
        }
    }
}

/// Where a request came from: its trace line, or a synthetic workload.
#[derive(Clone, Copy, Debug)]
pub(super) enum At {
    Line(u64),
    Synthetic,
}

impl std::fmt::Display for At {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            At::Line(l) => write!(f, "line {l}"),
            At::Synthetic => f.write_str("synthetic workload"),
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
        tally: VolumeTally,
    },
}

/// Parses a trace on its own thread; the order of requests is unchanged, so results are
/// identical to reading on the simulation thread. Dropping it stops the reader.
pub(super) struct Pipelined {
    rx: std::sync::mpsc::Receiver<Msg>,
    batch: std::vec::IntoIter<(Request, u64)>,
    line: u64,
    format: Format,
    skipped: u64,
    first_skipped: Option<String>,
    tally: VolumeTally,
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
                            tally: reader.tally().clone(),
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
            tally: VolumeTally::default(),
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
                    tally,
                }) => {
                    self.done = true;
                    self.tally = tally;
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
        timestamp: w.timestamp.clone(),
        // Checked with the configuration: merge or separate.
        volumes: w.volumes.as_deref().map(|v| match v {
            "separate" => trace::Volumes::Separate,
            _ => trace::Volumes::Merge,
        }),
        // A volume's range is whole logical blocks: no two volumes share one.
        volume_align_bytes: cfg.device.page_bytes.0 * cfg.device.pages_per_block,
    })
}

pub(super) fn seed_of(cfg: &Config) -> u64 {
    cfg.workload.seed.unwrap_or(cfg.run.seed)
}

/// The workload from the start: replayed from memory where it was parsed already (`parsed`),
/// else opened anew.
pub(super) fn reopen(cfg: &Config, parsed: Option<&std::rc::Rc<Parsed>>) -> Result<Source> {
    match parsed {
        Some(p) => Ok(Source::Kept(Kept::new(p))),
        None => open_source(cfg),
    }
}

pub(super) fn open_source(cfg: &Config) -> Result<Source> {
    if cfg.workload.kind == "trace" {
        let path = cfg.workload.path.as_deref().unwrap_or_default();
        let reader = trace::open(Path::new(path), &trace_options(cfg)?).map_err(|e| match e {
            SimError::Config { field, msg, at } if field == "timestamp" => SimError::Config {
                field: "workload.timestamp".into(),
                msg,
                at,
            },
            e => e,
        })?;
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
pub(super) struct Scan {
    pub(super) requests: u64,
    pub(super) max_end_bytes: u64,
    pub(super) distinct_lbns: u64,
    pub(super) footprint_pages: u64,
    /// Trace lines read and the format they were read as.
    pub(super) lines: u64,
    pub(super) format: Option<&'static str>,
    /// The requests themselves, for the first pass of the replay (None: too many).
    pub(super) parsed: Option<std::rc::Rc<Parsed>>,
}

pub(super) fn scan_trace(cfg: &Config, page_bytes: u64, ppb: u64) -> Result<Scan> {
    let mut src = open_source(cfg)?;
    let mut s = Scan::default();
    let mut lbns = FxHashSet::default();
    let mut pages = FxHashSet::default();
    let mut keeper = Keeper::new(true);
    while let Some(r) = src.next() {
        let r = r?;
        keeper.keep(&r, src.lines());
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
    s.parsed = keeper.finish(&src);
    Ok(s)
}

/// The error for a trace that yielded no request: how much was read, as what, and what
/// detection makes of the file when the format was declared.
pub(super) fn no_requests(cfg: &Config, lines: u64, format: Option<&str>) -> SimError {
    let Some(path) = &cfg.workload.path else {
        return SimError::Invalid("the workload has no requests".into());
    };
    if cfg.workload.device.is_some() {
        return SimError::Invalid(format!(
            "trace {path} has no requests for the selected workload.device"
        ));
    }
    trace::no_requests(
        path,
        format.unwrap_or("?"),
        lines,
        cfg.workload.format.is_some(),
    )
}
