//! Opening (with transparent decompression) and format detection.
//!
//! Compression is chosen by the file's magic bytes: gzip (`1f 8b`), bzip2 (`BZh`), zstd
//! (`28 b5 2f fd`, or a skippable frame `5? 2a 4d 18`). Concatenated members / frames are
//! all read.
//!
//! Detection ([`detect`]): the binary cache is recognised by its magic (also inside a
//! compressed file). Otherwise up to [`SAMPLE_LINES`] non-empty, non-comment lines are read
//! from the start of the (decompressed) file and every text format's own parser is run on
//! them. A format is a candidate when its parser accepts every sampled line and at least
//! one line is a record of the format (a header, a licence text or a blkparse summary
//! alone is no evidence). Format-specific rules on top of the parsers:
//!
//! * `systor` and `cloudphysics` need their header line (`Timestamp,Response,...`,
//!   `version,time,...`) as the first line.
//! * `disksim` and `mqsim` accept the same 5-column lines (when every type is 0 or 1).
//!   When both fit: if any time stamp has a fraction or an exponent → `disksim` (ms); if all
//!   are integers and the largest is ≥ 1,000,000 → `mqsim` (ns); if all are integers below
//!   1,000 → `disksim`; otherwise (integers between 1,000 and 1,000,000) it is ambiguous.
//! * `linnos` has the same columns again, in bytes instead of sectors, so it fits every file
//!   `disksim` or `mqsim` fits whose types are 0 or 1. Detection does not guess between units:
//!   when every size is a multiple of 512 (a whole number of sectors, as byte sizes of a real
//!   device are) and, read as 512-byte sectors, most requests would be 1 MiB or more, the file
//!   is ambiguous (`linnos` and the sector format(s) are named, and `--format` asked for);
//!   otherwise the sector reading stands and `linnos` is dropped. `linnos` is detected alone
//!   only when the sector formats reject the file.
//! * `generic` is never detected (it needs a column spec).
//! * `vscsi` (binary, no magic) is recognised before the text probes when the first 160
//!   bytes hold at least one complete vscsi record and every complete record among them has
//!   the version of the first (`ver` high byte 1 at bytes 14-15, or 2 at bytes 2-3, with the
//!   NUL high byte of `cmd` next to it) and a SCSI READ or WRITE opcode.
//!
//! One candidate → that format. Several → `SimError::Invalid` naming the candidates and
//! asking for an explicit format. None → `SimError::Invalid` listing the supported
//! formats, with the parse error of the closest format.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Cursor, Read};
use std::path::Path;

use ruzstd::frame::ReadFrameHeaderError;
use ruzstd::frame_decoder::{BlockDecodingStrategy, FrameDecoder, FrameDecoderError};

use super::fields::Parsed;
use super::{cloudphysics, systor, vscsi, Format, TextParser, BINARY_MAGIC};
use crate::error::{Result, SimError};

/// Buffer between the (decompressed) stream and the line reader.
pub(crate) const READ_BUF: usize = 1 << 20;
/// Buffer for compressed input.
const COMPRESSED_BUF: usize = 256 << 10;
/// Bytes checked for vscsi records (four version-2 or five version-1 records).
const VSCSI_PROBE_BYTES: usize = 160;
/// Non-empty, non-comment lines sampled for detection.
pub(crate) const SAMPLE_LINES: usize = 200;
/// At most this many decompressed bytes are read for the sample.
const SAMPLE_BYTES: u64 = 4 << 20;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Compression {
    None,
    Gzip,
    Bzip2,
    Zstd,
}

fn compression_of(magic: &[u8]) -> Compression {
    match magic {
        [0x1f, 0x8b, ..] => Compression::Gzip,
        [b'B', b'Z', b'h', ..] => Compression::Bzip2,
        [0x28, 0xb5, 0x2f, 0xfd, ..] => Compression::Zstd,
        [m, 0x2a, 0x4d, 0x18, ..] if m & 0xf0 == 0x50 => Compression::Zstd,
        _ => Compression::None,
    }
}

/// The first bytes of a stream, and a reader that yields them again before the rest.
type Peeked<R> = (Vec<u8>, io::Chain<Cursor<Vec<u8>>, R>);

/// Read up to `n` bytes from `r`, and give back a reader that yields them again first.
fn peek<R: Read>(mut r: R, n: usize) -> io::Result<Peeked<R>> {
    let mut head = vec![0u8; n];
    let mut got = 0;
    while got < n {
        match r.read(&mut head[got..]) {
            Ok(0) => break,
            Ok(k) => got += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    head.truncate(got);
    Ok((head.clone(), Cursor::new(head).chain(r)))
}

/// Open `path`, decompressing it if its magic says so. Returns a buffered reader of the
/// content and the content's first (up to) 8 bytes, which the reader still yields.
pub(crate) fn open_input(path: &Path) -> Result<(Box<dyn BufRead + Send>, Vec<u8>)> {
    let name = path.display().to_string();
    let io_err = |e: io::Error| SimError::io(name.as_str(), e);
    let f = File::open(path).map_err(io_err)?;
    if f.metadata().map_err(io_err)?.is_dir() {
        return Err(SimError::io(
            name.as_str(),
            "is a directory, not a trace file",
        ));
    }
    let (magic, raw) = peek(f, 4).map_err(io_err)?;
    let decoded: Box<dyn Read + Send> = match compression_of(&magic) {
        Compression::None => Box::new(raw),
        Compression::Gzip => Box::new(flate2::bufread::MultiGzDecoder::new(
            BufReader::with_capacity(COMPRESSED_BUF, raw),
        )),
        Compression::Bzip2 => Box::new(bzip2::bufread::MultiBzDecoder::new(
            BufReader::with_capacity(COMPRESSED_BUF, raw),
        )),
        Compression::Zstd => Box::new(ZstdReader::new(BufReader::with_capacity(
            COMPRESSED_BUF,
            raw,
        ))),
    };
    let (head, rest) = peek(decoded, BINARY_MAGIC.len()).map_err(io_err)?;
    Ok((Box::new(BufReader::with_capacity(READ_BUF, rest)), head))
}

/// A zstd stream of any number of frames (skippable frames are skipped).
struct ZstdReader<R: BufRead> {
    src: R,
    dec: FrameDecoder,
    in_frame: bool,
}

impl<R: BufRead> ZstdReader<R> {
    fn new(src: R) -> Self {
        ZstdReader {
            src,
            dec: FrameDecoder::new(),
            in_frame: false,
        }
    }
}

fn zstd_err(e: impl std::fmt::Display) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("corrupt zstd stream: {e}"),
    )
}

impl<R: BufRead> Read for ZstdReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            if !self.in_frame {
                if self.src.fill_buf()?.is_empty() {
                    return Ok(0);
                }
                match self.dec.reset(&mut self.src) {
                    Ok(()) => self.in_frame = true,
                    Err(FrameDecoderError::ReadFrameHeaderError(
                        ReadFrameHeaderError::SkipFrame { length, .. },
                    )) => {
                        let skipped = io::copy(
                            &mut (&mut self.src).take(u64::from(length)),
                            &mut io::sink(),
                        )?;
                        if skipped != u64::from(length) {
                            return Err(zstd_err("truncated skippable frame"));
                        }
                        continue;
                    }
                    Err(e) => return Err(zstd_err(e)),
                }
            }
            while self.dec.can_collect() < buf.len() && !self.dec.is_finished() {
                let want = buf.len() - self.dec.can_collect();
                self.dec
                    .decode_blocks(&mut self.src, BlockDecodingStrategy::UptoBytes(want))
                    .map_err(zstd_err)?;
            }
            let n = self.dec.read(buf)?;
            if n > 0 {
                return Ok(n);
            }
            if self.dec.is_finished() {
                self.in_frame = false;
            }
        }
    }
}

/// The formats auto-detection tries, in report order: every text format but `generic` (vscsi
/// and binary files are told by their first bytes).
fn detectable() -> impl Iterator<Item = Format> {
    Format::all()
        .iter()
        .copied()
        .filter(|&f| f.is_text() && f != Format::Generic)
}

/// One sampled line: 1-based line number and trimmed text.
type SampleLine = (u64, String);

fn read_sample(input: &mut dyn BufRead, name: &str) -> Result<Vec<SampleLine>> {
    let mut limited = input.take(SAMPLE_BYTES);
    let mut out = Vec::new();
    let mut buf = Vec::new();
    let mut line_no = 0u64;
    while out.len() < SAMPLE_LINES {
        buf.clear();
        let n = limited
            .read_until(b'\n', &mut buf)
            .map_err(|e| SimError::io(name, e))?;
        if n == 0 {
            break;
        }
        line_no += 1;
        let s = String::from_utf8_lossy(&buf);
        let mut t = s.trim_ascii();
        if line_no == 1 {
            t = t.strip_prefix('\u{feff}').unwrap_or(t);
        }
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        out.push((line_no, t.to_string()));
    }
    Ok(out)
}

/// How a format's parser fared on the sample.
struct Probe {
    format: Format,
    /// Lines that were records of the format (requests or not).
    evidence: usize,
    /// Lines accepted before the first error.
    accepted: usize,
    /// First error: line number and message.
    error: Option<(u64, String)>,
}

fn probe(format: Format, sample: &[SampleLine]) -> Probe {
    let mut p = TextParser::new(format, b'D', None, true);
    let mut pr = Probe {
        format,
        evidence: 0,
        accepted: 0,
        error: None,
    };
    let header_ok = match format {
        Format::Systor => sample.first().is_some_and(|(_, l)| systor::is_header(l)),
        Format::Cloudphysics => sample
            .first()
            .is_some_and(|(_, l)| cloudphysics::is_header(l)),
        _ => true,
    };
    if !header_ok {
        let (n, l) = sample.first().cloned().unwrap_or((0, String::new()));
        pr.error = Some((
            n,
            format!(
                "the first line {} is not the {} header",
                super::fields::show(&l),
                format
            ),
        ));
        return pr;
    }
    for (n, l) in sample {
        match p.parse(l, *n) {
            Ok(Parsed::Req(_) | Parsed::Record | Parsed::Done(_)) => pr.evidence += 1,
            Ok(Parsed::Other) => {}
            Err(e) => {
                pr.error = Some((*n, e));
                return pr;
            }
        }
        pr.accepted += 1;
    }
    if pr.evidence == 0 {
        pr.error = Some((0, format!("no {format} record among the sampled lines")));
    }
    pr
}

/// disksim (ms) or mqsim (ns) for a sample both accept; `None` when undecidable.
fn disksim_or_mqsim(sample: &[SampleLine]) -> Option<Format> {
    let mut max = 0.0f64;
    for (_, l) in sample {
        let t = l.split_ascii_whitespace().next().unwrap_or("");
        if !t.bytes().all(|b| b.is_ascii_digit()) {
            return Some(Format::Disksim);
        }
        max = max.max(t.parse::<f64>().unwrap_or(0.0));
    }
    if max >= 1e6 {
        Some(Format::Mqsim)
    } else if max < 1e3 {
        Some(Format::Disksim)
    } else {
        None
    }
}

/// Sizes of at least this many 512-byte sectors (1 MiB) are large requests.
const LARGE_SECTORS: u64 = (1 << 20) / 512;

/// For a sample that fits `linnos` and a sector format: when its sizes look like bytes (every
/// one a multiple of 512, and most of them 1 MiB or more if read as sectors), how many of the
/// sizes would be large requests; `None` when the sector reading is plausible.
fn sizes_look_like_bytes(sample: &[SampleLine]) -> Option<usize> {
    let mut large = 0;
    for (_, l) in sample {
        let size: u64 = l.split_ascii_whitespace().nth(3)?.parse().ok()?;
        if !size.is_multiple_of(512) {
            return None;
        }
        large += usize::from(size >= LARGE_SECTORS);
    }
    (2 * large > sample.len()).then_some(large)
}

fn supported_list() -> String {
    detectable()
        .map(|f| f.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Decide the format of a sample (the message has no file name).
fn detect_sample(sample: &[SampleLine]) -> std::result::Result<Format, String> {
    if sample.is_empty() {
        return Err(format!(
            "holds no record to detect the format from; pass the format explicitly (`--format`, \
             option `format`; supported: {}, vscsi, generic, binary)",
            supported_list()
        ));
    }
    let probes: Vec<Probe> = detectable().map(|f| probe(f, sample)).collect();
    let mut cands: Vec<Format> = probes
        .iter()
        .filter(|p| p.error.is_none())
        .map(|p| p.format)
        .collect();
    let mut note = "";
    if cands.contains(&Format::Disksim) && cands.contains(&Format::Mqsim) {
        match disksim_or_mqsim(sample) {
            Some(Format::Mqsim) => cands.retain(|&f| f != Format::Disksim),
            Some(_) => cands.retain(|&f| f != Format::Mqsim),
            None => note =
                " (integer time stamps between 1,000 and 1,000,000 could be disksim milliseconds \
                        or mqsim nanoseconds)",
        }
    }
    let sectors = cands
        .iter()
        .filter(|f| matches!(f, Format::Disksim | Format::Mqsim))
        .count();
    let units_note;
    if cands.contains(&Format::Linnos) && sectors > 0 {
        match sizes_look_like_bytes(sample) {
            Some(large) => {
                // The byte reading first: it is the one the sizes point to.
                cands.retain(|&f| f != Format::Linnos);
                cands.insert(0, Format::Linnos);
                units_note = format!(
                    "{note} (the formats differ only in units: linnos reads offsets and sizes \
                     as bytes, {} as 512-byte sectors; every size is a multiple of 512 and, \
                     read as sectors, {large} of the {} requests would be 1 MiB or more)",
                    cands
                        .iter()
                        .filter(|f| matches!(f, Format::Disksim | Format::Mqsim))
                        .map(|f| f.name())
                        .collect::<Vec<_>>()
                        .join(" and "),
                    sample.len(),
                );
                note = &units_note;
            }
            None => cands.retain(|&f| f != Format::Linnos),
        }
    }
    match cands.len() {
        1 => Ok(cands[0]),
        0 => {
            let best = probes
                .iter()
                .filter(|p| p.evidence > 0)
                // linnos loses ties: a file its sector twins fail on as far is theirs.
                .max_by_key(|p| (p.evidence, p.accepted, p.format != Format::Linnos));
            let closest = match best.and_then(|p| p.error.clone().map(|e| (p.format, e))) {
                Some((f, (line, msg))) => format!("; closest is {f} (line {line}: {msg})"),
                None => String::new(),
            };
            let first = &sample[0].1;
            let binary = if first.contains(['\0', '\u{fffd}']) {
                ", which looks binary, not text"
            } else {
                ""
            };
            Err(format!(
                "cannot detect the trace format: no supported format accepts the first {} lines \
                 (first line {}{binary}){closest}. Supported formats: {}, generic (needs a column spec), \
                 vscsi, binary. Pass the format explicitly (`--format`, option `format`)",
                sample.len(),
                super::fields::show(first),
                supported_list(),
            ))
        }
        _ => {
            Err(format!(
            "ambiguous trace format: the first {} lines fit {}{note}; pass the format explicitly \
             (`--format {}` or another of them, option `format`)",
            sample.len(),
            cands.iter().map(|f| f.name()).collect::<Vec<_>>().join(" and "),
            cands[0].name(),
        ))
        }
    }
}

/// Detect the format of a trace file (see the module documentation for the rules).
pub fn detect(path: &Path) -> Result<Format> {
    let name = path.display().to_string();
    let (mut input, head) = open_input(path)?;
    if head.starts_with(BINARY_MAGIC) {
        return Ok(Format::Binary);
    }
    // vscsi has no magic: its first records (NUL bytes at fixed places, which no text line
    // holds) must all carry the version of the first and a READ/WRITE opcode.
    let mut first = Vec::with_capacity(VSCSI_PROBE_BYTES);
    (&mut input)
        .take(VSCSI_PROBE_BYTES as u64)
        .read_to_end(&mut first)
        .map_err(|e| SimError::io(name.as_str(), e))?;
    if vscsi::looks_like(&first) {
        return Ok(Format::Vscsi);
    }
    let mut input = Cursor::new(first).chain(input);
    let sample = read_sample(&mut input, &name)?;
    detect_sample(&sample).map_err(|m| SimError::Invalid(format!("{name}: {m}")))
}

#[cfg(test)]
mod tests {
    use super::super::fields::assert_contains;
    use super::*;

    fn sample(text: &str) -> Vec<SampleLine> {
        text.lines()
            .enumerate()
            .map(|(i, l)| (i as u64 + 1, l.trim().to_string()))
            .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'))
            .collect()
    }

    #[test]
    fn detects_each_format() {
        let cases = [
            ("128166385295514663,hm,0,Write,9056014336,2048,2833\n", Format::Msr),
            ("0,20941264,8192,W,0.551706\n1,20941264,8192,r,0.6,x\n", Format::Umass),
            ("  8,33  30 1 0.001368096 5025 D R 540544 + 8 [systemd-udevd]\nCPU4 (8,33):\n", Format::Blkparse),
            ("0.000 5 174224064 16 1\n0.221 5 162947904 16 1\n", Format::Disksim),
            ("11413000 0 657728 16 1\n11565000 1 31244784 64 1\n", Format::Mqsim),
            ("licence\nstart ; sector; length ; op\n 0.0 ; 1 ; 8 ; W ; 0.0\n", Format::Blkreplay),
            ("1538323200,100,8,1,1063\n", Format::Tencent),
            ("0.000,120,1,4096,4923392,0.091,4096\n", Format::Flashnet),
            ("12,W,8192,4096,1577808000000123\n3,r,0,512,1577808000000200\n", Format::Alibaba),
            ("Timestamp,Response,IOType,LUN,Offset,Size\n1.5,0.1,R,0,4096,4096\n", Format::Systor),
            ("version,time,op,size,lbn\n1,5633898,2a,512,42932745\n", Format::Cloudphysics),
            ("39949 D read 299008 4096 0.000000000 0 False\n0 C read 299008 4096 0.1 0.1 False\n", Format::Wiscsee),
            ("1 2 3 4 5\n", Format::Disksim),
        ];
        for (text, f) in cases {
            assert_eq!(detect_sample(&sample(text)), Ok(f), "{text}");
        }
    }

    #[test]
    fn ambiguous_and_unknown() {
        let err = |text: &str| detect_sample(&sample(text)).unwrap_err();
        assert_contains(
            &err("5000 0 1 8 0\n6000 0 9 8 1\n"),
            &["ambiguous", "disksim", "mqsim", "--format"],
        );
        assert_contains(
            &err("hello world\n"),
            &["cannot detect", "msr", "cloudphysics"],
        );
        assert_contains(&err(""), &["no record"]);
    }

    #[test]
    fn units_are_not_guessed() {
        // LinnOS input: byte offsets and sizes (multiples of 4,096, and of 512), ms times.
        let linnos = "0.000 0 134217728 4096 1\n0.125 0 2147483648 65536 0\n0.5 0 4096 8192 1\n";
        let e = detect_sample(&sample(linnos)).unwrap_err();
        assert!(
            e.contains("ambiguous")
                && e.contains("linnos and disksim")
                && !e.contains("mqsim")
                && e.contains("`--format linnos`")
                && e.contains("3 of the 3 requests would be 1 MiB or more"),
            "{e}"
        );
        // Integer ms times of 1,000 to 1,000,000: disksim or mqsim as well.
        let e = detect_sample(&sample("5000 0 0 4096 1\n6000 0 8192 4096 0\n")).unwrap_err();
        assert_contains(
            &e,
            &[
                "linnos and disksim and mqsim",
                "milliseconds or mqsim nanoseconds",
                "differ only in units",
            ],
        );
        // Integer times ≥ 1e6: mqsim's nanoseconds against linnos's bytes.
        let e = detect_sample(&sample("2000000 1 0 8192 1\n3000000 1 512 4096 1\n")).unwrap_err();
        assert!(e.contains("fit linnos and mqsim ("), "{e}");
        // Sizes that are no whole number of sectors as bytes, or mostly small as sectors: the
        // sector reading stands.
        for text in [
            "0.0 0 100 4097 1\n0.1 0 100 4096 1\n",
            "0.0 0 100 8 1\n0.1 0 100 4096 1\n0.2 0 100 16 1\n",
            "0.0 0 100 2048 1\n0.1 0 100 0 1\n",
        ] {
            assert_eq!(detect_sample(&sample(text)), Ok(Format::Disksim), "{text}");
        }
        // Half large is not most.
        assert_eq!(
            detect_sample(&sample("0.0 0 0 0 1\n0.1 0 0 4096 1\n")),
            Ok(Format::Disksim)
        );
        // An offset that overflows as sectors leaves the byte reading alone.
        assert_eq!(
            detect_sample(&sample("0.5 0 36028797018963968 4096 1\n")),
            Ok(Format::Linnos)
        );
        // Other types than 0/1: only disksim's flags accept them.
        assert_eq!(
            detect_sample(&sample("0.5 0 0 4096 3\n0.6 0 0 4096 2\n")),
            Ok(Format::Disksim)
        );
    }

    #[test]
    fn compression_magic() {
        assert_eq!(compression_of(&[0x1f, 0x8b, 8, 0]), Compression::Gzip);
        assert_eq!(compression_of(b"BZh9"), Compression::Bzip2);
        assert_eq!(compression_of(&[0x28, 0xb5, 0x2f, 0xfd]), Compression::Zstd);
        assert_eq!(compression_of(&[0x50, 0x2a, 0x4d, 0x18]), Compression::Zstd);
        assert_eq!(compression_of(b"0.00"), Compression::None);
        assert_eq!(compression_of(b""), Compression::None);
    }
}
