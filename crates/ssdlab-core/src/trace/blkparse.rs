//! `blkparse` default text output:
//! `maj,min cpu seq time_s pid action rwbs sector + nsectors [process]`.
//!
//! One action is replayed: Q (queued), D (dispatched to the driver) or C (completed),
//! chosen by `TraceOptions::blkparse_action`; by default D when any D record appears in
//! the first 10,000 lines, else Q. Records of every other action are skipped whatever its
//! name, as long as the fields up to the action are well formed (field 6 is 1 to 8 letters).
//!
//! The tail after `rwbs` of each action's default line (blkparse's `process_default`; the
//! `(elapsed)` of `-t` may follow the range):
//!
//! | action | tail |
//! |---|---|
//! | `Q` `I` `D` `B` (queue, insert, issue, bounce) | `sector + n [process]`, or `[process]` (no range: a flush) |
//! | `C` `R` (complete, requeue) | `sector + n [error]`, or `sector [error]` (a zero-length request: a flush) |
//! | `M` `F` `G` `S` (back / front merge, get, sleep) | `sector + n [process]` or `[process]` |
//! | `P` (plug) | `[process]` |
//! | `U` `UT` (unplug, timer unplug) | `[process] n` |
//! | `A` (remap) | `sector + n <- (maj,min) sector` |
//! | `X` (split) | `sector / new_sector [process]` |
//! | `m` (message) | `N text` (with a cgroup id `ino,gen` before `m` on kernels with cgroup tracing) |
//! | pass-through (`Q I D C` of a SCSI command) | `bytes (cdb ..) [process]`, `(cdb ..) [error]` |
//!
//! Only a record of the replayed action (or a C, while D is replayed) with a range of at least
//! one sector is a request; the other forms of that action are not data requests and are
//! skipped: a flush without a range, the zero-length completion `C WS 1950885322 [0]`, a
//! pass-through command. Any other tail is a malformed record.
//!
//! blkparse merges the per-CPU streams, but events of several CPUs can still appear out of
//! time order. The reader puts the replayed requests back in time order through a bounded
//! window (see `TraceReader`): memory stays bounded, and a request that arrives later than
//! the window can repair is replayed at its place in the file and counted
//! (`TraceReader::late`).
//!
//! While D is replayed, each C (completion) record with a range is matched to the earliest D of
//! the same device, sector and operation still held in the reorder window, and C − D becomes
//! that request's measured latency (`Request::measured`).
//!
//! RWBS: containing `D` = discard → trim; else containing `W` → write; else `R` → read;
//! anything else (`N` pass-through or no data, a flush-only `F`, ...) is not a data request and
//! is skipped.
//!
//! Lines whose first field is not `maj,min` (the per-CPU and total summary blocks,
//! `Throughput`, `Events`, `Skips`, ...) are ignored.
//!
//! dev = the Linux `dev_t` of `maj,min` as glibc `makedev` encodes it, truncated to 32 bits:
//! `(maj & 0xfff) << 8 | (min & 0xff) | (min & 0xfff00) << 12` — i.e. `maj * 256 + min` for
//! minor numbers below 256 (`8,33` → 2081).

use std::io::BufRead;
use std::path::Path;

use super::fields::{num, request, scale, show, split_ws, too_few, uint, LineResult, Parsed};
use crate::error::{Result, SimError};
use crate::request::Op;

/// Longest action name accepted (blktrace's are one or two letters: `Q`, `UT`, `m`, ...).
const MAX_ACTION: usize = 8;

/// How many lines the default-action pre-scan reads.
pub(crate) const PRESCAN_LINES: u64 = 10_000;

pub(crate) struct Parser {
    action: u8,
}

/// `maj,min` → (maj, min).
#[inline]
fn maj_min(s: &str) -> Option<(u32, u32)> {
    let (a, b) = s.split_once(',')?;
    if a.is_empty()
        || b.is_empty()
        || !a.bytes().all(|c| c.is_ascii_digit())
        || !b.bytes().all(|c| c.is_ascii_digit())
    {
        return None;
    }
    Some((a.parse().ok()?, b.parse().ok()?))
}

/// glibc `makedev`, truncated to 32 bits.
#[inline]
pub(crate) fn dev_number(maj: u32, min: u32) -> u32 {
    ((maj & 0xfff) << 8) | (min & 0xff) | ((min & 0xfff00) << 12)
}

/// `hex,hex`: the cgroup id (inode, generation) blkparse prints before the action of a message
/// traced with cgroup information (kernels from 4.14).
#[inline]
fn is_cgroup_id(s: &str) -> bool {
    s.split_once(',').is_some_and(|(a, b)| {
        !a.is_empty()
            && !b.is_empty()
            && a.bytes().all(|c| c.is_ascii_hexdigit())
            && b.bytes().all(|c| c.is_ascii_hexdigit())
    })
}

/// The fields of a record line up to the action.
struct Head<'a> {
    dev: u32,
    time_s: f64,
    action: &'a str,
    /// Index of the RWBS field (the one after the action).
    rwbs: usize,
}

impl Parser {
    pub(crate) fn new(action: u8) -> Parser {
        Parser { action }
    }

    /// The fields of a record line up to the action (checked), or `None` for a non-record
    /// line.
    #[inline]
    fn head<'a>(
        f: &[&'a str],
        n: usize,
        line: &str,
    ) -> std::result::Result<Option<Head<'a>>, String> {
        let Some((maj, min)) = maj_min(f[0]) else {
            return Ok(None);
        };
        if maj > 0xfff || min > 0xfffff {
            return Err(format!(
                "field 1 (device) {} is not a valid major,minor pair",
                show(f[0])
            ));
        }
        if n < 7 {
            return Err(too_few(line, None, 7));
        }
        uint(f[1], "field 2 (cpu)")?;
        uint(f[2], "field 3 (sequence)")?;
        let time_s = num(f[3], "field 4 (time)")?;
        uint(f[4], "field 5 (pid)")?;
        // A message with a cgroup id: `ino,gen m N text`.
        let (a, rwbs) = if is_cgroup_id(f[5]) && n >= 8 {
            (6, 7)
        } else {
            (5, 6)
        };
        let action = f[a];
        if action.is_empty()
            || action.len() > MAX_ACTION
            || !action.bytes().all(|c| c.is_ascii_alphabetic())
        {
            return Err(format!(
                "field {} (action) {} is not an action name (1 to {MAX_ACTION} letters, such as Q, D, C, UT or m)",
                a + 1,
                show(action)
            ));
        }
        Ok(Some(Head {
            dev: dev_number(maj, min),
            time_s,
            action,
            rwbs,
        }))
    }

    #[inline]
    pub(crate) fn parse(&mut self, line: &str) -> LineResult {
        let (f, n) = split_ws::<11>(line);
        let Some(h) = Self::head(&f, n, line)? else {
            return Ok(Parsed::Other);
        };
        // While D is replayed, a C is the completion of an earlier D (D→C is the latency the
        // device took).
        let completes = self.action == b'D' && h.action == "C";
        if !completes && (h.action.len() != 1 || h.action.as_bytes()[0] != self.action) {
            return Ok(Parsed::Record);
        }
        let rwbs = f[h.rwbs];
        let op = if rwbs.contains('D') {
            Op::Trim
        } else if rwbs.contains('W') {
            Op::Write
        } else if rwbs.contains('R') {
            Op::Read
        } else {
            return Ok(Parsed::Record);
        };
        let (sector_field, count_field) = if h.rwbs == 6 {
            ("field 8 (sector)", "field 10 (nsectors)")
        } else {
            ("field 9 (sector)", "field 11 (nsectors)")
        };
        let (sector, count) = match &f[h.rwbs + 1..n] {
            [sector, "+", count, ..] => (uint(sector, sector_field)?, uint(count, count_field)?),
            // No range: a flush, a pass-through command `(cdb ..)`, a completion `[error]` of
            // one, or a request shown by its elapsed time only.
            [first, ..] if first.starts_with(['[', '(']) => return Ok(Parsed::Record),
            // `sector [error]`, `sector (elapsed) [error]`: the completion of a zero-length
            // request (a flush); `bytes (cdb ..) [process]`: a pass-through command.
            [number, next, ..] if next.starts_with(['[', '(']) => {
                uint(number, sector_field)?;
                return Ok(Parsed::Record);
            }
            _ => {
                return Err(format!(
                    "expected `sector + nsectors`, `sector [error]` or `[process]` after rwbs {}, \
                     found {}",
                    show(rwbs),
                    show(line)
                ))
            }
        };
        if count == 0 {
            // Zero-length: not a data request.
            return Ok(Parsed::Record);
        }
        let r = request(
            h.time_s * 1e6,
            op,
            scale(sector, 512, "sector")?,
            scale(count, 512, "nsectors")?,
            h.dev,
        )?;
        match r {
            Parsed::Req(c) if completes => Ok(Parsed::Done(c)),
            r => Ok(r),
        }
    }
}

/// True when `line` is a blkparse record line of action `action` (no full check).
fn is_action(line: &str, action: &str) -> bool {
    let (f, n) = split_ws::<6>(line);
    n == 6 && maj_min(f[0]).is_some() && f[5] == action
}

/// D when a D record appears in the first [`PRESCAN_LINES`] lines of `path`, else Q.
pub(crate) fn default_action(path: &Path) -> Result<u8> {
    let (mut input, _) = super::detect::open_input(path)?;
    let mut buf = Vec::with_capacity(256);
    for _ in 0..PRESCAN_LINES {
        buf.clear();
        match input.read_until(b'\n', &mut buf) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => return Err(SimError::io(path.display().to_string(), e)),
        }
        if let Ok(s) = std::str::from_utf8(&buf) {
            if is_action(s, "D") {
                return Ok(b'D');
            }
        }
    }
    Ok(b'Q')
}

#[cfg(test)]
mod tests {
    use super::super::fields::{err, req};
    use super::*;

    #[test]
    fn parses_blkparse() {
        let mut p = Parser::new(b'D');
        let r = req(
            p.parse("8,33  30        1     0.001368096  5025  D   R 540544 + 8 [systemd-udevd]")
        );
        assert_eq!(
            (r.op, r.offset_bytes, r.len_bytes, r.dev),
            (Op::Read, 540544 * 512, 4096, 2081)
        );
        assert!((r.time_us - 1368.096).abs() < 1e-6);
        assert_eq!(
            p.parse("8,33 4 1 0.000000000 3922 D N 0 (00 ..) [kworker/u65:0]"),
            Ok(Parsed::Record)
        );
        assert_eq!(
            p.parse("8,0 1 2 0.1 5 Q WS 100 + 8 [x]"),
            Ok(Parsed::Record)
        );
        assert_eq!(p.parse("8,0 1 2 0.1 5 D FWS [jbd2]"), Ok(Parsed::Record));
        assert_eq!(req(p.parse("8,0 1 2 0.1 5 D DS 100 + 8 [x]")).op, Op::Trim);
        let r = req(p.parse("259,1 1 2 0.1 5 D WSM 100 + 1 [x]"));
        assert_eq!((r.op, r.len_bytes, r.dev), (Op::Write, 512, 259 * 256 + 1));
        // Zero-length: no data request.
        assert_eq!(
            p.parse("259,1 1 2 0.1 5 D WSM 100 + 0 [x]"),
            Ok(Parsed::Record)
        );
        // The completion of a flush (no `+ n`), and a completion with a range.
        assert_eq!(
            p.parse("8,0 3 7 0.2 0 C WS 1950885322 [0]"),
            Ok(Parsed::Record)
        );
        assert!(matches!(
            p.parse("8,0 3 8 0.2 0 C WS 1950885322 + 8 [0]"),
            Ok(Parsed::Done(_))
        ));
        // A message with a cgroup id before the action.
        assert_eq!(
            p.parse("8,0 1 0 0.3 0 4a1,0 m N bfq1 insert_request"),
            Ok(Parsed::Record)
        );
        assert!(err(p.parse("8,0 3 7 0.2 0 C WS 19x [0]")).contains("field 8 (sector) \"19x\""));
        assert!(err(p.parse("8,0 3 7 0.2 0 C WS 100")).contains("sector [error]"));
        assert_eq!(p.parse("CPU4 (8,33):"), Ok(Parsed::Other));
        assert_eq!(
            p.parse("Reads Queued:           0,        0KiB"),
            Ok(Parsed::Other)
        );
        assert_eq!(p.parse("Total (8,33):"), Ok(Parsed::Other));
        assert!(err(p.parse("8,0 1 2 0.1 5 D W 100 - 8 [x]")).contains("sector + nsectors"));
        assert!(err(p.parse("8,0 1 2 abc 5 D W 100 + 8 [x]")).contains("time"));
        assert_eq!(dev_number(8, 300), (8 << 8) | 44 | (256 << 12));
    }
}
