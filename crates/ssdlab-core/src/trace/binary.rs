//! The compact binary trace cache (`.ssdt`), written by [`convert`] and read like any
//! other format (detected by its magic, also when compressed).
//!
//! Layout, all little-endian:
//!
//! ```text
//! header (32 bytes)
//!   0..8    magic        b"SSDLTRC1"
//!   8..10   version      u16 = 1
//!   10..12  record size  u16 = 25
//!   12..16  flags        u32 = 0 (reserved)
//!   16..24  record count u64 (u64::MAX while the file is being written)
//!   24..32  reserved     u64 = 0
//! record (25 bytes, packed, one per request, in trace order)
//!   0..8    time_us      f64
//!   8..16   offset_bytes u64
//!   16..20  len_bytes    u32 (a larger request cannot be stored: convert fails)
//!   20..24  dev          u32
//!   24      op           u8: 0 = read, 1 = write, 2 = trim
//! ```
//!
//! The writer streams into a temporary file next to the output, fills in the record count
//! at the end and renames the file into place, so a cache is either complete or absent.
//! The reader checks the count against the records present (truncation and trailing bytes
//! are errors) and reads 1.6 MB chunks, decoding up to 4096 well-formed records at a time.

use std::fs::{self, File};
use std::io::{BufRead, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::{Step, TraceOptions};
use crate::error::{Result, SimError};
use crate::request::{Op, Request};

/// The first 8 bytes of a binary trace cache.
pub const BINARY_MAGIC: &[u8; 8] = b"SSDLTRC1";
const VERSION: u16 = 1;
const HEADER_BYTES: usize = 32;
const RECORD_BYTES: usize = 25;
const COUNT_OFFSET: u64 = 16;
const UNFINISHED: u64 = u64::MAX;
/// Records read per chunk (1.6 MB: at least the input's 1 MiB buffer, which large reads bypass).
const CHUNK_RECORDS: usize = 1 << 16;
/// How many records ahead the replay is shown ([`BinaryReader::drain_run`]): far enough for a
/// prefetch of the buffer's index to arrive from the L3 cache.
pub(crate) const LOOKAHEAD: usize = 8;
/// How far ahead of the replay the chunk is requested from memory.
const BUF_AHEAD_BYTES: usize = 1024;

fn encode(r: &Request, len: u32, out: &mut [u8; RECORD_BYTES]) {
    out[0..8].copy_from_slice(&r.time_us.to_le_bytes());
    out[8..16].copy_from_slice(&r.offset_bytes.to_le_bytes());
    out[16..20].copy_from_slice(&len.to_le_bytes());
    out[20..24].copy_from_slice(&r.dev.to_le_bytes());
    out[24] = match r.op {
        Op::Read => 0,
        Op::Write => 1,
        Op::Trim => 2,
    };
}

fn header(count: u64) -> [u8; HEADER_BYTES] {
    let mut h = [0u8; HEADER_BYTES];
    h[0..8].copy_from_slice(BINARY_MAGIC);
    h[8..10].copy_from_slice(&VERSION.to_le_bytes());
    h[10..12].copy_from_slice(&(RECORD_BYTES as u16).to_le_bytes());
    h[16..24].copy_from_slice(&count.to_le_bytes());
    h
}

/// Fill `buf` as far as the input allows; returns the bytes read.
fn read_full(input: &mut dyn Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match input.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

pub(crate) struct BinaryReader {
    input: Box<dyn BufRead + Send>,
    buf: Box<[u8]>,
    pos: usize,
    end: usize,
    /// Records not yet loaded into `buf`.
    unread: u64,
    count: u64,
}

impl BinaryReader {
    /// Read and check the header.
    pub(crate) fn new(mut input: Box<dyn BufRead + Send>, file: &str) -> Result<BinaryReader> {
        let mut h = [0u8; HEADER_BYTES];
        let got = read_full(&mut input, &mut h).map_err(|e| SimError::io(file, e))?;
        let bad = |m: String| SimError::Invalid(format!("{file}: binary trace: {m}"));
        if got < HEADER_BYTES {
            return Err(bad(format!(
                "truncated header ({got} of {HEADER_BYTES} bytes)"
            )));
        }
        if &h[0..8] != BINARY_MAGIC {
            return Err(bad("magic SSDLTRC1 missing".to_string()));
        }
        let version = u16::from_le_bytes([h[8], h[9]]);
        if version != VERSION {
            return Err(bad(format!(
                "version {version} is not supported (this build reads version {VERSION})"
            )));
        }
        let rec = u16::from_le_bytes([h[10], h[11]]) as usize;
        if rec != RECORD_BYTES {
            return Err(bad(format!("record size {rec} is not {RECORD_BYTES}")));
        }
        let count = u64::from_le_bytes(h[16..24].try_into().expect("8 bytes"));
        if count == UNFINISHED {
            return Err(bad(
                "the file is incomplete (its conversion did not finish)".to_string(),
            ));
        }
        Ok(BinaryReader {
            input,
            buf: vec![0u8; CHUNK_RECORDS * RECORD_BYTES].into_boxed_slice(),
            pos: 0,
            end: 0,
            unread: count,
            count,
        })
    }

    fn refill(&mut self, file: &str) -> std::result::Result<bool, SimError> {
        if self.unread == 0 {
            let mut probe = [0u8; 1];
            let extra =
                read_full(&mut self.input, &mut probe).map_err(|e| SimError::io(file, e))?;
            if extra > 0 {
                return Err(SimError::Invalid(format!(
                    "{file}: binary trace: trailing bytes after the {} records its header announces",
                    self.count
                )));
            }
            return Ok(false);
        }
        let k = (self.unread.min(CHUNK_RECORDS as u64)) as usize;
        let want = k * RECORD_BYTES;
        let got =
            read_full(&mut self.input, &mut self.buf[..want]).map_err(|e| SimError::io(file, e))?;
        if got < want {
            let have = self.count - self.unread + (got / RECORD_BYTES) as u64;
            return Err(SimError::Invalid(format!(
                "{file}: binary trace is truncated: the header announces {} records, the file holds {have}",
                self.count
            )));
        }
        self.unread -= k as u64;
        self.pos = 0;
        self.end = want;
        Ok(true)
    }

    /// The record at `pos` if it is well-formed (the fast path of [`super::TraceReader`];
    /// `line` counts records as in [`BinaryReader::step`]).
    #[inline(always)]
    pub(crate) fn pop(&mut self, line: &mut u64) -> Option<Request> {
        if self.pos >= self.end {
            return None;
        }
        let b = &self.buf[self.pos..self.pos + RECORD_BYTES];
        let r = decode_valid(b.try_into().expect("one record"))?;
        self.pos += RECORD_BYTES;
        *line += 1;
        Some(r)
    }

    /// Hand the well-formed records loaded from `pos` on to `f` in order, decoded in place, each
    /// with its line and the byte offset of the request [`LOOKAHEAD`] records later (or of the
    /// chunk's last), whose data the caller may start loading. Stops at the end of the chunk, at
    /// a malformed record (left for [`BinaryReader::step`]) or at `f`'s first error. Returns how
    /// many were handed over. Each request is counted in `tally`.
    #[inline(always)]
    pub(crate) fn drain_run(
        &mut self,
        line: &mut u64,
        tally: &mut super::volumes::VolumeTally,
        mut f: impl FnMut(&Request, u64, u64) -> Result<()>,
    ) -> Result<usize> {
        let start = self.pos;
        // Only read once `pop` has found a record, so the chunk holds at least one.
        let last = self.end.saturating_sub(RECORD_BYTES);
        while let Some(r) = self.pop(line) {
            let a = (self.pos + (LOOKAHEAD - 1) * RECORD_BYTES).min(last) + 8;
            let ahead = u64::from_le_bytes(self.buf[a..a + 8].try_into().expect("8 bytes"));
            // The chunk has left the cache by the time the replay reaches most of it.
            crate::units::prefetch(&self.buf, self.pos + BUF_AHEAD_BYTES);
            tally.note(r.dev, r.len_bytes);
            f(&r, ahead, *line)?;
        }
        Ok((self.pos - start) / RECORD_BYTES)
    }

    #[inline]
    pub(crate) fn step(&mut self, file: &str, line: &mut u64) -> Step {
        if let Some(r) = self.pop(line) {
            return Step::Req(r);
        }
        self.step_slow(file, line)
    }

    #[cold]
    #[inline(never)]
    fn step_slow(&mut self, file: &str, line: &mut u64) -> Step {
        if self.pos == self.end {
            match self.refill(file) {
                Ok(true) => {}
                Ok(false) => return Step::Eof,
                Err(e) => return Step::Fatal(e),
            }
            if let Some(r) = self.pop(line) {
                return Step::Req(r);
            }
        }
        // The record at `pos` is malformed.
        let b = &self.buf[self.pos..self.pos + RECORD_BYTES];
        self.pos += RECORD_BYTES;
        *line += 1;
        match decode(b) {
            Ok(r) => Step::Req(r),
            Err(msg) => Step::Bad(msg),
        }
    }
}

/// Decode one well-formed record (None if it is malformed: [`decode`] says why).
#[inline(always)]
fn decode_valid(b: &[u8; RECORD_BYTES]) -> Option<Request> {
    let time_us = f64::from_le_bytes(b[0..8].try_into().expect("8 bytes"));
    let offset_bytes = u64::from_le_bytes(b[8..16].try_into().expect("8 bytes"));
    let len_bytes = u32::from_le_bytes(b[16..20].try_into().expect("4 bytes")) as u64;
    let dev = u32::from_le_bytes(b[20..24].try_into().expect("4 bytes"));
    let op = match b[24] {
        0 => Op::Read,
        1 => Op::Write,
        2 => Op::Trim,
        _ => return None,
    };
    // The same bounds the text readers enforce: a hostile or corrupt cache must not feed the
    // engine a NaN / negative time or a request whose end overflows.
    // Finite and ≥ 0 (−0.0 included) on the bits, and no overflow, without branches between.
    let bits = time_us.to_bits();
    let time_ok = (bits < 0x7FF0_0000_0000_0000) | (bits == 0x8000_0000_0000_0000);
    let end_ok = offset_bytes <= u64::MAX - len_bytes;
    if !(time_ok & end_ok) {
        return None;
    }
    Some(Request::new(
        time_us + 0.0,
        op,
        offset_bytes,
        len_bytes,
        dev,
    ))
}

/// Decode one record, or say why it is malformed.
fn decode(b: &[u8]) -> std::result::Result<Request, String> {
    let b: &[u8; RECORD_BYTES] = b.try_into().expect("one record");
    if let Some(r) = decode_valid(b) {
        return Ok(r);
    }
    let time_us = f64::from_le_bytes(b[0..8].try_into().expect("8 bytes"));
    let offset_bytes = u64::from_le_bytes(b[8..16].try_into().expect("8 bytes"));
    let len_bytes = u32::from_le_bytes(b[16..20].try_into().expect("4 bytes")) as u64;
    Err(if b[24] > 2 {
        format!("op byte {} is not 0 (read), 1 (write) or 2 (trim)", b[24])
    } else if !(time_us.is_finite() && time_us >= 0.0) {
        format!("time {time_us} µs is not a finite non-negative number")
    } else {
        format!("offset {offset_bytes} + size {len_bytes} bytes overflows 64 bits")
    })
}

fn temp_path(out: &Path) -> PathBuf {
    let name = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "trace".into());
    out.with_file_name(format!(".{name}.{}.tmp", std::process::id()))
}

/// Stream the trace at `path` (read with `opts`: format, device filter, skip_invalid) into
/// the binary cache at `out`. Returns the number of records written.
pub fn convert(path: &Path, opts: &TraceOptions, out: &Path) -> Result<u64> {
    let mut reader = super::open(path, opts)?;
    let src = path.display().to_string();
    let mut checked = false;
    let requests = std::iter::from_fn(|| match reader.next() {
        Some(r) => Some(r.map(|r| (r, reader.line()))),
        // A file of another format ends the conversion with an error, and writes nothing.
        None if !checked => {
            checked = true;
            reader
                .check_recognised(opts.format.is_some())
                .err()
                .map(Err)
        }
        None => None,
    });
    write_binary(requests, &src, out)
}

/// Write `requests` (each with the source line it came from, for error messages) as a binary
/// trace at `out`. Returns the number of records written.
pub fn write_binary(
    requests: impl Iterator<Item = Result<(Request, u64)>>,
    src: &str,
    out: &Path,
) -> Result<u64> {
    let out_name = out.display().to_string();
    let mut rec = [0u8; RECORD_BYTES];
    let put = |w: &mut BufWriter<File>, r: &Request, line: u64| {
        let len = u32::try_from(r.len_bytes).map_err(|_| {
            SimError::trace(
                src,
                line,
                format!(
                    "request of {} bytes is larger than the binary cache's limit of {} bytes",
                    r.len_bytes,
                    u32::MAX
                ),
            )
        })?;
        no_placement_id(
            r,
            src,
            line,
            &format!("the binary cache (version {VERSION})"),
        )?;
        encode(r, len, &mut rec);
        w.write_all(&rec)
            .map_err(|e| SimError::io(out_name.as_str(), e))
    };
    // The count goes in last, so that an interrupted file is recognised as such.
    let set_count = |f: &mut File, n: u64| {
        f.seek(SeekFrom::Start(COUNT_OFFSET))?;
        f.write_all(&n.to_le_bytes())
    };
    write_atomically(out, &header(UNFINISHED), requests, put, set_count)
}

/// A writer of format `format`, which stores no FDP placement identifier, refuses a request
/// that carries one rather than drop it.
pub(crate) fn no_placement_id(r: &Request, src: &str, line: u64, format: &str) -> Result<()> {
    if r.placement_id == 0 {
        return Ok(());
    }
    Err(SimError::trace(
        src,
        line,
        format!(
            "placement identifier {}: {format} stores none; replay the workload instead",
            r.placement_id
        ),
    ))
}

/// Write `head` then every request through `put` into a temporary file next to `out`, let
/// `finish` patch the file, and rename it into place: the output is either complete or absent.
/// Returns the number of requests written.
pub(crate) fn write_atomically(
    out: &Path,
    head: &[u8],
    requests: impl Iterator<Item = Result<(Request, u64)>>,
    mut put: impl FnMut(&mut BufWriter<File>, &Request, u64) -> Result<()>,
    finish: impl FnOnce(&mut File, u64) -> std::io::Result<()>,
) -> Result<u64> {
    let out_name = out.display().to_string();
    let tmp = temp_path(out);
    let io_err = |e: std::io::Error| SimError::io(out_name.as_str(), e);
    let result = (|| -> Result<u64> {
        let f = File::create(&tmp).map_err(io_err)?;
        let mut w = BufWriter::with_capacity(1 << 20, f);
        w.write_all(head).map_err(io_err)?;
        let mut n = 0u64;
        for r in requests {
            let (r, line) = r?;
            put(&mut w, &r, line)?;
            n += 1;
        }
        let mut f = w.into_inner().map_err(|e| io_err(e.into_error()))?;
        finish(&mut f, n).map_err(io_err)?;
        f.sync_all().map_err(io_err)?;
        fs::rename(&tmp, out).map_err(io_err)?;
        Ok(n)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A malformed record between well-formed ones ends a decoded run: it is reported at its own
    /// record number and reading goes on after it.
    #[test]
    fn bad_record_between_good_ones() {
        let r = Request::new(1.0, Op::Write, 8192, 4096, 0);
        let mut data = header(5).to_vec();
        let mut b = [0u8; RECORD_BYTES];
        for k in 0..5 {
            encode(&r, 4096, &mut b);
            if k == 2 || k == 4 {
                b[24] = 9;
            }
            data.extend_from_slice(&b);
        }
        let mut rd = BinaryReader::new(Box::new(std::io::Cursor::new(data)), "x").unwrap();
        let mut line = 0;
        let mut got = vec![];
        loop {
            match rd.step("x", &mut line) {
                Step::Req(q) => got.push((line, q == r)),
                Step::Bad(m) => got.push((line, m.contains("op byte 9"))),
                Step::Eof => break,
                Step::Done(_) => unreachable!("no completions in a binary trace"),
                Step::Fatal(e) => panic!("{e}"),
            }
        }
        assert_eq!(got, [(1, true), (2, true), (3, true), (4, true), (5, true)]);
    }

    /// The bit test of the time agrees with `is_finite() && >= 0.0`.
    #[test]
    fn time_check_on_bits() {
        let mut b = [0u8; RECORD_BYTES];
        let r = Request::new(0.0, Op::Read, 0, 1, 0);
        for t in [
            0.0,
            -0.0,
            1e-300,
            5e-324,
            1.5,
            f64::MAX,
            -5e-324,
            -1.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            -f64::NAN,
        ] {
            encode(&Request { time_us: t, ..r }, 1, &mut b);
            let want = t.is_finite() && t >= 0.0;
            assert_eq!(decode_valid(&b).is_some(), want, "{t}");
        }
        encode(
            &Request {
                offset_bytes: u64::MAX,
                ..r
            },
            1,
            &mut b,
        );
        assert!(decode_valid(&b).is_none());
        encode(
            &Request {
                offset_bytes: u64::MAX - 1,
                ..r
            },
            1,
            &mut b,
        );
        assert!(decode_valid(&b).is_some());
    }

    #[test]
    fn record_round_trip() {
        let r = Request::new(12.5, Op::Trim, 1 << 40, 4096, 7);
        let mut b = [0u8; RECORD_BYTES];
        encode(&r, 4096, &mut b);
        let mut data = header(1).to_vec();
        data.extend_from_slice(&b);
        let mut rd = BinaryReader::new(Box::new(std::io::Cursor::new(data.clone())), "x").unwrap();
        let mut line = 0;
        assert!(matches!(rd.step("x", &mut line), Step::Req(q) if q == r));
        assert!(matches!(rd.step("x", &mut line), Step::Eof));
        // truncated
        let mut rd =
            BinaryReader::new(Box::new(std::io::Cursor::new(data[..40].to_vec())), "x").unwrap();
        assert!(
            matches!(rd.step("x", &mut line), Step::Fatal(e) if e.to_string().contains("truncated"))
        );
        // trailing bytes
        data.push(0);
        let mut rd = BinaryReader::new(Box::new(std::io::Cursor::new(data)), "x").unwrap();
        assert!(matches!(rd.step("x", &mut line), Step::Req(_)));
        assert!(
            matches!(rd.step("x", &mut line), Step::Fatal(e) if e.to_string().contains("trailing"))
        );
        // unfinished
        let e = BinaryReader::new(
            Box::new(std::io::Cursor::new(header(UNFINISHED).to_vec())),
            "x",
        )
        .err()
        .unwrap();
        assert!(e.to_string().contains("incomplete"));
    }
}
