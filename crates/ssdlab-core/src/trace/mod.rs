//! Streaming block-trace readers.
//!
//! [`open`] returns a [`TraceReader`], an iterator of [`Request`]s that never holds more
//! than one line (or one chunk of binary records) of the trace in memory. Files may be
//! compressed with gzip, bzip2 or zstd (multi-member / multi-frame streams included); the
//! compression is recognised by the file's magic bytes, not by its extension.
//!
//! Supported formats (see [`Format::layout`] for the exact record layouts):
//!
//! | name | source | dev |
//! |---|---|---|
//! | `msr` | MSR Cambridge CSV | DiskNumber |
//! | `umass` | UMass / SPC (Financial, WebSearch) CSV | ASU |
//! | `blkparse` | `blkparse` default text output | `maj*256+min` (glibc `makedev`) |
//! | `disksim` | DiskSim ASCII (time in ms) | devno |
//! | `mqsim` | MQSim ASCII (time in ns) | devno |
//! | `blkreplay` | blkreplay `.load` files | 0 |
//! | `tencent` | SNIA Tencent CBS CSV | volume id |
//! | `flashnet` | FlashNet / LinnOS replayer output (with measured latencies) | 0 |
//! | `linnos` | LinnOS / FlashNet replayer input (DiskSim's columns in bytes) | devno |
//! | `alibaba` | Alibaba Cloud block-trace CSV | device_id |
//! | `systor` | SYSTOR'17 CSV | LUN |
//! | `cloudphysics` | libCacheSim CloudPhysics CSV | 0 |
//! | `vscsi` | CloudPhysics vscsi binary records (versions 1 and 2) | 0 |
//! | `wiscsee` | WiscSee ftlsim event text | 0 |
//! | `generic` | any delimited text, columns named by a [`GenericSpec`] | optional column |
//! | `binary` | the compact cache written by [`convert`] | stored |
//!
//! Time stamps are converted to microseconds. MSR FILETIME stamps (100 ns since 1601) are
//! re-based to the Unix epoch (µs since 1970) when they are later than 1970, which keeps
//! sub-microsecond resolution in an `f64`; smaller (synthetic) stamps are only divided by 10.
//!
//! Every format is described variant by variant in `docs/traces.md`.
//!
//! In every text format empty lines and lines starting with `#` are ignored.

mod alibaba;
mod binary;
pub(crate) use binary::LOOKAHEAD;
mod blkparse;
mod blkreplay;
mod cloudphysics;
mod detect;
mod disksim;
mod fields;
mod flashnet;
mod generic;
mod info;
mod linnos;
mod measured;
mod mqsim;
mod msr;
mod profile;
mod systor;
mod tencent;
mod umass;
mod volumes;
mod vscsi;
mod wiscsee;

use std::io::{BufRead, Read};
use std::path::Path;

use crate::error::{Result, SimError};
pub use crate::request::{Op, Request};

pub use binary::{convert, write_binary, BINARY_MAGIC};
pub use detect::detect;
pub use generic::GenericSpec;
pub use info::{info, TraceInfo, VolumeInfo};
pub use measured::{
    measured_latencies, LatencySummary, MeasuredLatency, MeasuredSeries, PERCENTILES,
};
pub use msr::write_msr;
pub use profile::{
    profile, PageClass, PageClasses, Profile, ProfileOptions, SectorWriteCounts, Window,
};
pub(crate) use volumes::VolumeTally;
pub use volumes::{
    large_requests_warning, layout as volume_layout, merged_warning, VolumeCount, VolumeRange,
    Volumes,
};

use fields::{LineResult, Parsed};

/// A trace file format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase", try_from = "String")]
pub enum Format {
    Msr,
    Umass,
    Blkparse,
    Disksim,
    Mqsim,
    Blkreplay,
    Tencent,
    Flashnet,
    Linnos,
    Alibaba,
    Systor,
    Cloudphysics,
    Vscsi,
    Wiscsee,
    Generic,
    Binary,
}

const ALL_FORMATS: [Format; 16] = [
    Format::Msr,
    Format::Umass,
    Format::Blkparse,
    Format::Disksim,
    Format::Mqsim,
    Format::Blkreplay,
    Format::Tencent,
    Format::Flashnet,
    Format::Linnos,
    Format::Alibaba,
    Format::Systor,
    Format::Cloudphysics,
    Format::Vscsi,
    Format::Wiscsee,
    Format::Generic,
    Format::Binary,
];

/// A format read by name (as [`Format::from_name`]: any case, a suggestion for a typo).
impl TryFrom<String> for Format {
    type Error = SimError;
    fn try_from(s: String) -> Result<Format> {
        Format::from_name(&s)
    }
}

impl Format {
    /// The name used in configuration files and on the command line.
    pub fn name(&self) -> &'static str {
        match self {
            Format::Msr => "msr",
            Format::Umass => "umass",
            Format::Blkparse => "blkparse",
            Format::Disksim => "disksim",
            Format::Mqsim => "mqsim",
            Format::Blkreplay => "blkreplay",
            Format::Tencent => "tencent",
            Format::Flashnet => "flashnet",
            Format::Linnos => "linnos",
            Format::Alibaba => "alibaba",
            Format::Vscsi => "vscsi",
            Format::Systor => "systor",
            Format::Cloudphysics => "cloudphysics",
            Format::Wiscsee => "wiscsee",
            Format::Generic => "generic",
            Format::Binary => "binary",
        }
    }

    /// Parse a format name (case-insensitive). `spc` is accepted for `umass`.
    pub fn from_name(s: &str) -> Result<Format> {
        let t = s.trim();
        if t.eq_ignore_ascii_case("spc") {
            return Ok(Format::Umass);
        }
        Format::all()
            .iter()
            .copied()
            .find(|f| f.name().eq_ignore_ascii_case(t))
            .ok_or_else(|| {
                let names: Vec<&str> = Format::all().iter().map(|f| f.name()).collect();
                SimError::Invalid(format!(
                    "unknown trace format `{s}`; {}",
                    crate::error::suggestion(t, &names)
                ))
            })
    }

    /// Every format, in documentation order.
    pub fn all() -> &'static [Format] {
        &ALL_FORMATS
    }

    /// Human description of the expected record layout.
    pub fn layout(&self) -> &'static str {
        match self {
            Format::Msr => {
                "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime (no header; Timestamp \
                 = Windows FILETIME in 100 ns units; Type = Read|Write; Offset and Size in bytes)"
            }
            Format::Umass => {
                "ASU,LBA,Size,Opcode,Timestamp[,...] (LBA in 512-byte sectors; Size in bytes; \
                 Opcode r|w; Timestamp in seconds)"
            }
            Format::Blkparse => {
                "blkparse default output `maj,min cpu seq time_s pid action rwbs sector + nsectors \
                 [process]` (action Q, D or C is replayed, every other action skipped; rwbs with \
                 D = discard, W = write, R = read; a record without `+ n` (a flush, a zero-length \
                 completion `sector [error]`, a pass-through `(cdb ..)`) or with `+ 0` is no data \
                 request and skipped; put back in time order within 65,536 requests)"
            }
            Format::Disksim => {
                "DiskSim ASCII `time_ms devno start_sector size_sectors flags` (whitespace-separated; \
                 512-byte sectors; flags bit 0 set = read, clear = write)"
            }
            Format::Mqsim => {
                "MQSim ASCII `time_ns devno start_sector size_sectors type` (whitespace-separated; \
                 512-byte sectors; type 0 = write, 1 = read)"
            }
            Format::Blkreplay => {
                "blkreplay load `start_s ; sector ; length_sectors ; R|W ; ...` (after optional \
                 licence lines and a column header line starting with `start`; 512-byte sectors; \
                 op R or W, RWBS-style suffixes such as RA allowed)"
            }
            Format::Tencent => {
                "Tencent CBS `timestamp_s,offset_sectors,size_sectors,iotype,volume_id` (512-byte \
                 sectors; iotype 0 = read, 1 = write)"
            }
            Format::Flashnet => {
                "FlashNet replayer output `ts_record_ms,latency_us,io_type,size_B,offset_B,\
                 ts_submit_ms,size_after_replay` (no header; times in ms; io_type 1 = read, 0 = \
                 write; size and offset in bytes; latency_us = the measured latency)"
            }
            Format::Linnos => {
                "LinnOS / FlashNet replayer input `ts_ms devno offset_B size_B op` (whitespace-\
                 separated; time in ms; offset and size in bytes, not sectors; op 1 = read, 0 = \
                 write)"
            }
            Format::Alibaba => {
                "Alibaba block trace `device_id,opcode,offset,length,timestamp` (opcode R|W; offset \
                 and length in bytes; timestamp in µs; optional `device_id,...` header line)"
            }
            Format::Vscsi => {
                "CloudPhysics vscsi binary: little-endian records, version 1 (32 bytes: sn u32, len \
                 u32, nSG u32, cmd u16, ver u16 = 0x01xx, lbn u64, ts u64) or version 2 (40 bytes: \
                 cmd u16, ver u16 = 0x02xx, sn u32, len u32, nSG u32, lbn u64, ts u64, rt u64); len \
                 in bytes, lbn in 512-byte sectors, ts in µs, cmd = SCSI READ/WRITE opcode"
            }
            Format::Systor => {
                "SYSTOR'17 CSV `Timestamp,Response,IOType,LUN,Offset,Size` (header line; Timestamp \
                 in Unix seconds; IOType R|W; Offset and Size in bytes)"
            }
            Format::Cloudphysics => {
                "CloudPhysics CSV `version,time,op,size,lbn` (header line; time in seconds; op = SCSI \
                 opcode in hex: 28/08/88/a8 read, 2a/0a/8a/aa write; size in bytes; lbn in 512-byte \
                 sectors)"
            }
            Format::Wiscsee => {
                "WiscSee ftlsim events `pid action op offset_B size_B time_s delta sync` (action D = \
                 request, C = completion; op read|write|discard)"
            }
            Format::Generic => {
                "delimited text with the columns, units and op codes given by the `generic` spec"
            }
            Format::Binary => {
                "ssdlab binary trace cache (magic SSDLTRC1, fixed 25-byte little-endian records)"
            }
        }
    }

    /// The time stamps a format has a choice of, the default first (empty: one time stamp).
    /// flashnet: `submit` (when the replayer submitted the request, the load under which its
    /// latency was measured) or `record` (the original trace's arrival time).
    pub fn timestamps(&self) -> &'static [&'static str] {
        match self {
            Format::Flashnet => &["submit", "record"],
            _ => &[],
        }
    }

    /// The time stamp chosen by `opts.timestamp` (None: the default, or the format has one).
    fn timestamp<'a>(&self, choice: Option<&'a str>) -> Result<Option<&'a str>> {
        let Some(c) = choice else {
            return Ok(None);
        };
        let valid = self.timestamps();
        if valid.is_empty() {
            return Err(SimError::config(
                "timestamp",
                format!(
                    "`{c}`: format `{}` has a single time stamp; the choice applies to traces \
                     with two (flashnet: submit | record)",
                    self.name()
                ),
            ));
        }
        crate::error::one_of("timestamp", c, valid)?;
        Ok(Some(c))
    }

    pub(crate) fn is_text(&self) -> bool {
        !matches!(self, Format::Binary | Format::Vscsi)
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// How to open a trace.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct TraceOptions {
    /// `None` = auto-detect.
    pub format: Option<Format>,
    /// Keep only this dev / volume / LUN.
    pub device: Option<u32>,
    /// Count and skip malformed records instead of failing.
    pub skip_invalid: bool,
    /// blkparse action to replay: 'Q', 'D' or 'C'. Default: D when the first 10,000 lines
    /// hold a D record, else Q.
    pub blkparse_action: Option<char>,
    /// Column spec, required when `format == Generic`.
    pub generic: Option<GenericSpec>,
    /// Which time stamp a trace with two replays (see [`Format::timestamps`]); `None` = the
    /// format's default, its first.
    pub timestamp: Option<String>,
    /// How several volumes meet the device ([`Volumes`]); `None` = merged, as `merge`, but a
    /// run says so when it saw several.
    pub volumes: Option<Volumes>,
    /// `separate`: each volume's range is a multiple of this (0 = 4,096 bytes).
    pub volume_align_bytes: u64,
}

/// The parser of one text format.
pub(crate) enum TextParser {
    Msr,
    Umass,
    Blkparse(blkparse::Parser),
    Disksim,
    Mqsim,
    Blkreplay(blkreplay::Parser),
    Tencent,
    Flashnet(flashnet::Parser),
    Linnos,
    Alibaba,
    Systor,
    Cloudphysics,
    Wiscsee,
    Generic(Box<generic::Parser>),
}

impl TextParser {
    /// A parser for a text format. `blkparse_action` must already be resolved for blkparse;
    /// `generic` must be validated for generic; `submit` picks flashnet's submit times.
    pub(crate) fn new(
        format: Format,
        blkparse_action: u8,
        generic: Option<&GenericSpec>,
        submit: bool,
    ) -> TextParser {
        match format {
            Format::Msr => TextParser::Msr,
            Format::Umass => TextParser::Umass,
            Format::Blkparse => TextParser::Blkparse(blkparse::Parser::new(blkparse_action)),
            Format::Disksim => TextParser::Disksim,
            Format::Mqsim => TextParser::Mqsim,
            Format::Blkreplay => TextParser::Blkreplay(blkreplay::Parser::default()),
            Format::Tencent => TextParser::Tencent,
            Format::Flashnet => TextParser::Flashnet(flashnet::Parser { submit }),
            Format::Linnos => TextParser::Linnos,
            Format::Alibaba => TextParser::Alibaba,
            Format::Systor => TextParser::Systor,
            Format::Cloudphysics => TextParser::Cloudphysics,
            Format::Wiscsee => TextParser::Wiscsee,
            Format::Generic => TextParser::Generic(Box::new(generic::Parser::new(
                generic.expect("generic spec checked by the caller").clone(),
            ))),
            Format::Binary | Format::Vscsi => unreachable!("not a text format"),
        }
    }

    /// Parse one trimmed, non-empty, non-comment line (`line_no` is 1-based).
    #[inline]
    pub(crate) fn parse(&mut self, line: &str, line_no: u64) -> LineResult {
        match self {
            TextParser::Msr => msr::parse(line),
            TextParser::Umass => umass::parse(line),
            TextParser::Blkparse(p) => p.parse(line),
            TextParser::Disksim => disksim::parse(line),
            TextParser::Mqsim => mqsim::parse(line),
            TextParser::Blkreplay(p) => p.parse(line),
            TextParser::Tencent => tencent::parse(line),
            TextParser::Flashnet(p) => p.parse(line),
            TextParser::Linnos => linnos::parse(line),
            TextParser::Alibaba => alibaba::parse(line),
            TextParser::Systor => systor::parse(line),
            TextParser::Cloudphysics => cloudphysics::parse(line),
            TextParser::Wiscsee => wiscsee::parse(line),
            TextParser::Generic(p) => p.parse(line, line_no),
        }
    }
}

/// What the underlying source produced next.
pub(crate) enum Step {
    Req(Request),
    /// The completion of an earlier request ([`Parsed::Done`]).
    Done(Request),
    Eof,
    /// A malformed record: the message without file, line, format or layout.
    Bad(String),
    /// An unrecoverable error (I/O, corrupt compressed stream, truncated binary file).
    Fatal(SimError),
}

/// Longest text line accepted (a longer one is a malformed record).
const MAX_LINE: u64 = 1 << 20;

/// Line-by-line text source.
pub(crate) struct TextSource {
    input: Box<dyn BufRead + Send>,
    buf: Vec<u8>,
    parser: TextParser,
    /// Lines that hold something (not empty, not a comment), and records of the format among
    /// them: none of many says the file is of another format.
    content: u64,
    records: u64,
}

impl TextSource {
    pub(crate) fn new(input: Box<dyn BufRead + Send>, parser: TextParser) -> TextSource {
        TextSource {
            input,
            buf: Vec::with_capacity(256),
            parser,
            content: 0,
            records: 0,
        }
    }

    #[inline]
    fn step(&mut self, file: &str, line: &mut u64) -> Step {
        loop {
            self.buf.clear();
            match (&mut self.input)
                .take(MAX_LINE)
                .read_until(b'\n', &mut self.buf)
            {
                Ok(0) => return Step::Eof,
                Ok(_) => {}
                Err(e) => return Step::Fatal(SimError::io(file, e)),
            }
            *line += 1;
            if self.buf.len() as u64 == MAX_LINE && self.buf.last() != Some(&b'\n') {
                // Not a text trace (or a broken one): skip the rest of the line without
                // holding it in memory.
                loop {
                    self.buf.clear();
                    match (&mut self.input)
                        .take(MAX_LINE)
                        .read_until(b'\n', &mut self.buf)
                    {
                        Ok(0) => break,
                        Ok(_) if self.buf.last() == Some(&b'\n') => break,
                        Ok(_) => {}
                        Err(e) => return Step::Fatal(SimError::io(file, e)),
                    }
                }
                return Step::Bad(format!("the line is longer than {} MiB", MAX_LINE >> 20));
            }
            let s = match std::str::from_utf8(&self.buf) {
                Ok(s) => s,
                Err(_) => return Step::Bad("the line is not ASCII/UTF-8 text".to_string()),
            };
            let mut t = s.trim_ascii();
            if *line == 1 {
                // A UTF-8 byte-order mark (CSV files saved by Windows tools).
                t = t.strip_prefix('\u{feff}').unwrap_or(t);
            }
            if t.is_empty() || t.as_bytes()[0] == b'#' {
                continue;
            }
            self.content += 1;
            match self.parser.parse(t, *line) {
                Ok(Parsed::Req(r)) => {
                    self.records += 1;
                    return Step::Req(r);
                }
                Ok(Parsed::Record) => self.records += 1,
                Ok(Parsed::Done(r)) => {
                    self.records += 1;
                    return Step::Done(r);
                }
                Ok(Parsed::Other) => {}
                Err(m) => return Step::Bad(m),
            }
        }
    }
}

enum Source {
    Text(TextSource),
    Binary(binary::BinaryReader),
    Vscsi(vscsi::VscsiReader),
}

/// Requests the blkparse reader holds to put events of several CPUs back in time order.
pub const REORDER_WINDOW: usize = 1 << 16;

/// A request waiting in the reorder window; the heap's top is the earliest (then the first
/// read, so equal times keep their file order).
struct Pending(Request, u64);

impl PartialEq for Pending {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == std::cmp::Ordering::Equal
    }
}
impl Eq for Pending {}
impl PartialOrd for Pending {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Pending {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        o.0.time_us
            .total_cmp(&self.0.time_us)
            .then_with(|| o.1.cmp(&self.1))
    }
}

/// Bounded time-order repair: at most `window` requests are held; the earliest is
/// released when the window is full and the rest at the end of the input (or before an
/// error, which comes after them). A completion read while its request is held gives the
/// request its measured latency (completion time − issue time); completions are matched to
/// the earliest held request of the same device, offset and operation.
struct Reorder {
    heap: std::collections::BinaryHeap<Pending>,
    /// Held requests not yet completed, by (dev, offset, op): (sequence number, issue time).
    open: rustc_hash::FxHashMap<(u32, u64, Op), std::collections::VecDeque<(u64, f64)>>,
    /// Measured latencies of held requests, by sequence number.
    done: rustc_hash::FxHashMap<u64, f32>,
    window: usize,
    seq: u64,
    last: f64,
    late: u64,
    ended: bool,
    err: Option<SimError>,
}

impl Reorder {
    fn new(window: usize) -> Reorder {
        Reorder {
            heap: std::collections::BinaryHeap::new(),
            open: Default::default(),
            done: Default::default(),
            window: window.max(1),
            seq: 0,
            last: f64::NEG_INFINITY,
            late: 0,
            ended: false,
            err: None,
        }
    }
    fn push(&mut self, r: Request) {
        self.open
            .entry((r.dev, r.offset_bytes, r.op))
            .or_default()
            .push_back((self.seq, r.time_us));
        self.heap.push(Pending(r, self.seq));
        self.seq += 1;
    }
    /// A completion: the latency of the earliest held request it completes.
    fn complete(&mut self, c: &Request) {
        let key = (c.dev, c.offset_bytes, c.op);
        let Some(q) = self.open.get_mut(&key) else {
            return;
        };
        if let Some((seq, t)) = q.pop_front() {
            self.done.insert(seq, (c.time_us - t).max(0.0) as f32);
        }
        if q.is_empty() {
            self.open.remove(&key);
        }
    }
    fn pop(&mut self) -> Option<Request> {
        let Pending(mut r, seq) = self.heap.pop()?;
        match self.done.remove(&seq) {
            Some(m) => r.measured_us = m,
            None => {
                // Released before its completion was read: that completion matches nothing.
                let key = (r.dev, r.offset_bytes, r.op);
                if let Some(q) = self.open.get_mut(&key) {
                    q.retain(|&(s, _)| s != seq);
                    if q.is_empty() {
                        self.open.remove(&key);
                    }
                }
            }
        }
        if r.time_us < self.last {
            self.late += 1;
        } else {
            self.last = r.time_us;
        }
        Some(r)
    }
}

/// A streaming trace reader: an iterator of requests (or the first error).
///
/// After an error the iterator is exhausted. With `skip_invalid`, malformed records are
/// counted ([`TraceReader::skipped`]) instead of ending the iteration.
///
/// blkparse requests, and flashnet requests timed by their submit times, are released in time
/// order through a window of [`REORDER_WINDOW`] requests (events of several CPUs, submissions of
/// several replayer threads, may be out of order in the file). A request earlier
/// than one already released is released at once and counted by [`TraceReader::late`].
/// Requests read before a malformed record are all released before its error. Every other
/// format is replayed in file order.
pub struct TraceReader {
    format: Format,
    file: String,
    device: Option<u32>,
    skip_invalid: bool,
    skipped: u64,
    first_skipped: Option<String>,
    line: u64,
    done: bool,
    src: Source,
    reorder: Option<Reorder>,
    /// `separate`: where each volume's offset 0 lands.
    bases: Option<rustc_hash::FxHashMap<u32, u64>>,
    tally: volumes::VolumeTally,
}

impl TraceReader {
    /// The requests handed out so far of every volume, in the order first seen.
    pub fn volumes(&self) -> Vec<VolumeCount> {
        self.tally.counts()
    }
    /// What was counted of the requests handed out so far (volumes, large requests).
    pub(crate) fn tally(&self) -> &volumes::VolumeTally {
        &self.tally
    }
    /// The format being read (detected or given).
    pub fn format(&self) -> Format {
        self.format
    }
    /// Malformed records skipped so far (only with `skip_invalid`).
    pub fn skipped(&self) -> u64 {
        self.skipped
    }
    /// The message of the first skipped record, `file:line: ...`.
    pub fn first_skipped(&self) -> Option<String> {
        self.first_skipped.clone()
    }
    /// Current line number (1-based line of the last record read; for the binary format,
    /// the record number). For blkparse the reader reads ahead (see [`REORDER_WINDOW`]).
    pub fn line(&self) -> u64 {
        self.line
    }
    /// Requests released out of time order so far: blkparse (or flashnet submit-time) requests
    /// that came later than the reorder window could repair (always 0 for the other formats,
    /// which are not reordered).
    pub fn late(&self) -> u64 {
        self.reorder.as_ref().map_or(0, |r| r.late)
    }
    /// Once the trace has been read: an error when it had lines, none of them a record of the
    /// format given (`declared`), and detection recognises the file as another format. (A file
    /// no format recognises, a header alone say, stays an empty trace.)
    pub fn check_recognised(&self, declared: bool) -> Result<()> {
        let Source::Text(t) = &self.src else {
            return Ok(());
        };
        if !declared || t.records > 0 || t.content == 0 {
            return Ok(());
        }
        match detect(Path::new(&self.file)) {
            Ok(f) if f != self.format => {
                Err(no_requests(&self.file, self.format.name(), self.line, true))
            }
            _ => Ok(()),
        }
    }
    /// Like the reader [`open`] returns, with a reorder window of `window` requests
    /// (blkparse only; for tests).
    #[doc(hidden)]
    pub fn with_reorder_window(mut self, window: usize) -> TraceReader {
        if self.reorder.is_some() {
            self.reorder = Some(Reorder::new(window));
        }
        self
    }

    /// The next request in file order.
    #[inline]
    fn next_raw(&mut self) -> Option<Result<Request>> {
        if self.done {
            return None;
        }
        loop {
            let step = match &mut self.src {
                Source::Text(t) => t.step(&self.file, &mut self.line),
                Source::Binary(b) => b.step(&self.file, &mut self.line),
                Source::Vscsi(v) => v.step(&self.file, &mut self.line),
            };
            match step {
                Step::Req(mut r) => {
                    if let Some(d) = self.device {
                        if r.dev != d {
                            continue;
                        }
                    }
                    if let Err(e) = self.place(&mut r) {
                        self.done = true;
                        return Some(Err(e));
                    }
                    self.tally.note(r.dev, r.len_bytes);
                    return Some(Ok(r));
                }
                Step::Done(mut c) => {
                    let placed = self.place(&mut c).is_ok();
                    if let (true, Some(ro)) = (placed, &mut self.reorder) {
                        ro.complete(&c);
                    }
                }
                Step::Eof => {
                    self.done = true;
                    return None;
                }
                Step::Bad(msg) => {
                    let err = SimError::trace(
                        self.file.as_str(),
                        self.line,
                        format!(
                            "malformed {} record: {msg}; expected layout: {}",
                            self.format.name(),
                            self.format.layout()
                        ),
                    );
                    if self.skip_invalid {
                        self.skipped += 1;
                        if self.first_skipped.is_none() {
                            self.first_skipped = Some(err.to_string());
                        }
                        continue;
                    }
                    self.done = true;
                    return Some(Err(err));
                }
                Step::Fatal(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
            }
        }
    }
}

impl Iterator for TraceReader {
    type Item = Result<Request>;

    #[inline(always)]
    fn next(&mut self) -> Option<Result<Request>> {
        // Fast path: a request already decoded by the binary reader, when no device filter,
        // volume placement or reordering applies (a few instructions per record, inlined into
        // the caller).
        if let (Source::Binary(b), None, None, None) =
            (&mut self.src, self.device, &self.reorder, &self.bases)
        {
            if let Some(r) = b.pop(&mut self.line) {
                self.tally.note(r.dev, r.len_bytes);
                return Some(Ok(r));
            }
        }
        self.next_slow()
    }
}

impl TraceReader {
    /// `separate`: moves a request into its volume's range.
    #[inline]
    fn place(&self, r: &mut Request) -> Result<()> {
        let Some(bases) = &self.bases else {
            return Ok(());
        };
        match bases.get(&r.dev) {
            // Within 2^64: the layout added up every volume's highest address.
            Some(b) => {
                r.offset_bytes = r.offset_bytes.saturating_add(*b);
                Ok(())
            }
            None => Err(SimError::trace(
                self.file.as_str(),
                self.line,
                format!(
                    "volume {} was not in the trace when its volumes were laid out \
                     (workload.volumes = \"separate\"): did the file change?",
                    r.dev
                ),
            )),
        }
    }
}

impl TraceReader {
    /// The well-formed records already loaded (binary traces without a device filter), decoded
    /// in place and handed to `f` in file order, each with the byte offset of a request a few
    /// places on (a prefetch hint) and its line; stops at `f`'s first error. Returns how many (0
    /// when none is loaded: [`Iterator::next`] then reads on).
    #[inline(always)]
    pub fn drain_run(&mut self, f: impl FnMut(&Request, u64, u64) -> Result<()>) -> Result<usize> {
        match (&mut self.src, self.device, &self.reorder, &self.bases) {
            (Source::Binary(b), None, None, None) => {
                b.drain_run(&mut self.line, &mut self.tally, f)
            }
            _ => Ok(0),
        }
    }

    #[inline(never)]
    fn next_slow(&mut self) -> Option<Result<Request>> {
        if self.reorder.is_none() {
            return self.next_raw();
        }
        loop {
            let ro = self.reorder.as_mut().expect("checked");
            if ro.ended {
                return match ro.pop() {
                    Some(r) => Some(Ok(r)),
                    None => ro.err.take().map(Err),
                };
            }
            if ro.heap.len() >= ro.window {
                return ro.pop().map(Ok);
            }
            let raw = self.next_raw();
            let ro = self.reorder.as_mut().expect("checked");
            match raw {
                Some(Ok(r)) => ro.push(r),
                Some(Err(e)) => {
                    ro.ended = true;
                    ro.err = Some(e);
                }
                None => ro.ended = true,
            }
        }
    }
}

impl std::iter::FusedIterator for TraceReader {}

/// The error for a trace of which no request was read: how many lines, read as what format,
/// and, when the format was given rather than detected, what detection makes of the file.
pub fn no_requests(file: &str, format: &str, lines: u64, declared: bool) -> SimError {
    let hint = match (declared, detect(Path::new(file))) {
        (true, Ok(f)) if f.name() != format => {
            format!("; detection suggests format `{}`", f.name())
        }
        (true, Err(_)) => "; detection recognises no format either".to_string(),
        _ => String::new(),
    };
    SimError::Invalid(format!(
        "trace {file} has no requests: read {} lines, none parsed as format `{format}`{hint}",
        crate::units::grouped(lines)
    ))
}

/// Open a trace for streaming. With `opts.format == None` the format is detected
/// ([`detect`]). An empty trace (or one with no request of `opts.device`) is not an error.
pub fn open(path: &Path, opts: &TraceOptions) -> Result<TraceReader> {
    let file = path.display().to_string();
    let action = match opts.blkparse_action {
        None => None,
        Some(c) => match c.to_ascii_uppercase() {
            a @ ('Q' | 'D' | 'C') => Some(a as u8),
            _ => {
                return Err(SimError::config(
                    "blkparse_action",
                    format!("`{c}`: expected Q, D or C"),
                ))
            }
        },
    };
    let format = match opts.format {
        Some(f) => f,
        None => detect(path)?,
    };
    let bases = match opts.volumes {
        Some(Volumes::Separate) => Some(
            volumes::layout(
                path,
                &TraceOptions {
                    format: Some(format),
                    ..opts.clone()
                },
            )?
            .iter()
            .map(|v| (v.dev, v.base_bytes))
            .collect(),
        ),
        _ => None,
    };
    let submit = format.timestamp(opts.timestamp.as_deref())? != Some("record");
    let generic = if format == Format::Generic {
        let spec = opts.generic.as_ref().ok_or_else(|| {
            SimError::config(
                "generic",
                "format `generic` needs a column spec (`generic` options)",
            )
        })?;
        spec.validate()?;
        Some(spec)
    } else {
        None
    };
    let (input, head) = detect::open_input(path)?;
    let is_binary = head.starts_with(BINARY_MAGIC);
    let src = if format == Format::Binary {
        if !is_binary {
            return Err(SimError::Invalid(format!(
                "{file}: not an ssdlab binary trace (magic {} missing)",
                String::from_utf8_lossy(BINARY_MAGIC)
            )));
        }
        Source::Binary(binary::BinaryReader::new(input, &file)?)
    } else if format == Format::Vscsi {
        if is_binary {
            return Err(SimError::Invalid(format!(
                "{file}: is an ssdlab binary trace cache, not a vscsi trace; use format `binary` or auto-detection"
            )));
        }
        Source::Vscsi(vscsi::VscsiReader::new(input))
    } else {
        if is_binary {
            return Err(SimError::Invalid(format!(
                "{file}: is an ssdlab binary trace cache, not `{}` text; use format `binary` or auto-detection",
                format.name()
            )));
        }
        let action = match (format, action) {
            (Format::Blkparse, None) => blkparse::default_action(path)?,
            (_, a) => a.unwrap_or(b'D'),
        };
        Source::Text(TextSource::new(
            input,
            TextParser::new(format, action, generic, submit),
        ))
    };
    debug_assert!(format.is_text() == matches!(src, Source::Text(_)));
    Ok(TraceReader {
        format,
        file,
        device: opts.device,
        skip_invalid: opts.skip_invalid,
        skipped: 0,
        first_skipped: None,
        line: 0,
        done: false,
        // blkparse: events of several CPUs; flashnet's submit times: several replayer threads.
        reorder: (format == Format::Blkparse || (format == Format::Flashnet && submit))
            .then(|| Reorder::new(REORDER_WINDOW)),
        src,
        bases,
        tally: Default::default(),
    })
}

/// The registry entry of workload `trace`.
pub const WORKLOAD: crate::component::Component = crate::component::Component::new(
    "workload",
    "trace",
    "Replay a block I/O trace file (see `ssdlab trace info`).",
    crate::params::NONE,
    &[
        "workload.path",
        "workload.format",
        "workload.device",
        "workload.volumes",
        "workload.address_map",
        "workload.skip_invalid",
        "workload.blkparse_action",
        "workload.timestamp",
        "workload.generic",
    ],
);

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send<T: Send>() {}

    #[test]
    fn reader_is_send() {
        assert_send::<TraceReader>();
    }

    #[test]
    fn format_names_round_trip() {
        for f in Format::all() {
            assert_eq!(Format::from_name(f.name()).unwrap(), *f);
            assert_eq!(Format::from_name(&f.name().to_uppercase()).unwrap(), *f);
            let json = serde_json::to_string(f).unwrap();
            assert_eq!(json, format!("\"{}\"", f.name()));
            assert!(!f.layout().is_empty());
        }
        let e = Format::from_name("nope").unwrap_err().to_string();
        assert!(
            e.contains("msr") && e.contains("wiscsee") && e.contains("binary"),
            "{e}"
        );
        assert_eq!(Format::from_name("SPC").unwrap(), Format::Umass);
    }
}
