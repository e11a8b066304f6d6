//! CloudPhysics `vscsi` binary block traces (VMware vSCSI stats, as distributed with
//! libCacheSim, e.g. `cloudPhysicsIO.vscsi`).
//!
//! No file header; a sequence of fixed-size little-endian records in one of two versions,
//! told apart by the 16-bit `ver` field (its high byte is the version):
//!
//! | version | bytes | layout (offset: field) |
//! |---|---|---|
//! | 1 | 32 | 0: sn u32, 4: len u32, 8: nSG u32, 12: cmd u16, 14: ver u16 (0x01xx), 16: lbn u64, 24: ts u64 |
//! | 2 | 40 | 0: cmd u16, 2: ver u16 (0x02xx), 4: sn u32, 8: len u32, 12: nSG u32, 16: lbn u64, 24: ts u64, 32: rt u64 |
//!
//! len = bytes; lbn = 512-byte sectors; ts = µs; cmd = SCSI opcode: READ(6/10/12/16)
//! `08 28 a8 88` → read, WRITE(6/10/12/16) `0a 2a aa 8a` → write; any other command is a
//! malformed record (with `skip_invalid` it is counted and skipped). sn, nSG and rt are
//! not used. The version is taken from the first record (version 2 is tried first); every
//! record must carry it. A truncated last record is a malformed record. dev = 0.
//!
//! Record numbers (1-based) stand for line numbers in error messages.

use std::io::BufRead;

use super::Step;
use crate::error::SimError;
use crate::request::{Op, Request};

/// Records read per refill.
const CHUNK_RECORDS: usize = 8192;

/// The record size of a vscsi stream whose first bytes are `head`, or `None` when `head`
/// does not start with a vscsi record (at least 16 bytes are needed).
pub(crate) fn record_size(head: &[u8]) -> Option<usize> {
    if head.len() >= 4 && head[1] == 0 && head[3] == 2 {
        return Some(40);
    }
    if head.len() >= 16 && head[13] == 0 && head[15] == 1 {
        return Some(32);
    }
    None
}

/// True when `head` holds at least one complete vscsi record and every complete record
/// in it has the version of the first and a READ or WRITE opcode (used by detection).
pub(crate) fn looks_like(head: &[u8]) -> bool {
    let Some(rec) = record_size(head) else {
        return false;
    };
    let n = head.len() / rec;
    n >= 1
        && head.chunks_exact(rec).all(|b| {
            let (cmd, ver) = fields_cmd_ver(b, rec);
            ver >> 8 == (if rec == 40 { 2 } else { 1 }) && scsi_op(cmd).is_some()
        })
}

#[inline]
fn u16_at(b: &[u8], i: usize) -> u16 {
    u16::from_le_bytes([b[i], b[i + 1]])
}
#[inline]
fn u32_at(b: &[u8], i: usize) -> u32 {
    u32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes"))
}
#[inline]
fn u64_at(b: &[u8], i: usize) -> u64 {
    u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"))
}

#[inline]
fn fields_cmd_ver(b: &[u8], rec: usize) -> (u16, u16) {
    if rec == 40 {
        (u16_at(b, 0), u16_at(b, 2))
    } else {
        (u16_at(b, 12), u16_at(b, 14))
    }
}

#[inline]
fn scsi_op(cmd: u16) -> Option<Op> {
    match cmd {
        0x08 | 0x28 | 0xa8 | 0x88 => Some(Op::Read),
        0x0a | 0x2a | 0xaa | 0x8a => Some(Op::Write),
        _ => None,
    }
}

pub(crate) struct VscsiReader {
    input: Box<dyn BufRead + Send>,
    /// Record size (32 or 40); 0 until the first record has been seen.
    rec: usize,
    buf: Vec<u8>,
    pos: usize,
    end: usize,
    eof: bool,
}

impl VscsiReader {
    pub(crate) fn new(input: Box<dyn BufRead + Send>) -> VscsiReader {
        VscsiReader {
            input,
            rec: 0,
            buf: Vec::new(),
            pos: 0,
            end: 0,
            eof: false,
        }
    }

    /// Fill `buf` with up to `CHUNK_RECORDS` records (keeps unread bytes).
    fn refill(&mut self, file: &str, want: usize) -> Result<(), SimError> {
        self.buf.copy_within(self.pos..self.end, 0);
        self.end -= self.pos;
        self.pos = 0;
        if self.buf.len() < want {
            self.buf.resize(want, 0);
        }
        while self.end < want && !self.eof {
            match self.input.read(&mut self.buf[self.end..want]) {
                Ok(0) => self.eof = true,
                Ok(k) => self.end += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(SimError::io(file, e)),
            }
        }
        Ok(())
    }

    pub(crate) fn step(&mut self, file: &str, line: &mut u64) -> Step {
        let rec = if self.rec == 0 { 40 } else { self.rec };
        if self.end - self.pos < rec && !self.eof {
            let want = rec * CHUNK_RECORDS;
            if let Err(e) = self.refill(file, want) {
                return Step::Fatal(e);
            }
        }
        let avail = self.end - self.pos;
        if avail == 0 {
            return Step::Eof;
        }
        if self.rec == 0 {
            match record_size(&self.buf[self.pos..self.end]) {
                Some(r) => self.rec = r,
                None => {
                    *line += 1;
                    let n = avail.min(16);
                    let head = &self.buf[self.pos..self.pos + n];
                    self.pos = self.end;
                    return Step::Bad(format!(
                        "the first record is neither version 1 (ver field, bytes 14-15 = 0x01xx) nor \
                         version 2 (bytes 2-3 = 0x02xx); first bytes {head:02x?}"
                    ));
                }
            }
        }
        let rec = self.rec;
        *line += 1;
        if avail < rec {
            self.pos = self.end;
            return Step::Bad(format!(
                "truncated record: {avail} of {rec} bytes at the end of the file"
            ));
        }
        let b = &self.buf[self.pos..self.pos + rec];
        self.pos += rec;
        let (cmd, ver) = fields_cmd_ver(b, rec);
        let want_ver = if rec == 40 { 2 } else { 1 };
        if ver >> 8 != want_ver {
            return Step::Bad(format!(
                "field ver 0x{ver:04x} is not version {want_ver} (0x{want_ver:02x}xx) like the first record"
            ));
        }
        let Some(op) = scsi_op(cmd) else {
            return Step::Bad(format!(
                "field cmd SCSI opcode 0x{cmd:02x} is neither a READ (08, 28, a8, 88) nor a WRITE \
                 (0a, 2a, aa, 8a)"
            ));
        };
        let (len, lbn, ts) = if rec == 40 {
            (u32_at(b, 8), u64_at(b, 16), u64_at(b, 24))
        } else {
            (u32_at(b, 4), u64_at(b, 16), u64_at(b, 24))
        };
        let Some(offset_bytes) = lbn.checked_mul(512) else {
            return Step::Bad(format!("field lbn {lbn} × 512 overflows 64 bits"));
        };
        if offset_bytes.checked_add(u64::from(len)).is_none() {
            return Step::Bad(format!(
                "field lbn {lbn} + len {len} bytes overflows 64 bits"
            ));
        }
        Step::Req(Request::new(ts as f64, op, offset_bytes, u64::from(len), 0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_versions() {
        // Version 1: sn 7, len 512, nSG 1, cmd 0x2a (WRITE(10)), ver 0x0100, lbn 9, ts 10.
        let head: [u8; 16] = [7, 0, 0, 0, 0, 2, 0, 0, 1, 0, 0, 0, 0x2a, 0, 0, 1];
        let r = [&head[..], &9u64.to_le_bytes(), &10u64.to_le_bytes()].concat();
        assert_eq!(record_size(&r), Some(32));
        assert!(looks_like(&r));
        assert!(!looks_like(b"1,5633898,2a,512,42932745\n1,5633898"));
        assert!(!looks_like(&r[..20]));
        let mut bad = r.clone();
        bad[12] = 0x35; // SYNCHRONIZE CACHE
        assert!(!looks_like(&bad));
    }
}
