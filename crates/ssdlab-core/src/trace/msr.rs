//! MSR Cambridge CSV (SNIA IOTTA): `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`.
//!
//! No header (a line whose first field is `Timestamp` is skipped all the same). Timestamp is
//! a Windows FILETIME (100 ns ticks since 1601-01-01); it is re-based to µs since the Unix
//! epoch when it is later than 1970, else divided by 10. Type is `Read` or `Write`
//! (case-insensitive); Offset and Size are bytes; dev = DiskNumber. ResponseTime, in the same
//! 100 ns ticks, is kept as the request's measured latency (µs); it may be missing or empty
//! (no measurement), as in the traces [`write_msr`] writes.

use super::fields::{
    latency, op_code, request_measured, split_fields, too_few, uint, uint32, LineResult, Parsed,
};
use crate::request::Op;

/// FILETIME of 1970-01-01T00:00:00Z.
const UNIX_EPOCH_FILETIME: u64 = 116_444_736_000_000_000;

/// µs from a FILETIME stamp.
#[inline]
pub(crate) fn filetime_us(ts: u64) -> f64 {
    if ts >= UNIX_EPOCH_FILETIME {
        (ts - UNIX_EPOCH_FILETIME) as f64 / 10.0
    } else {
        ts as f64 / 10.0
    }
}

#[inline]
pub(crate) fn parse(line: &str) -> LineResult {
    let (f, n) = split_fields::<7>(line, ',');
    if f[0].eq_ignore_ascii_case("timestamp") {
        return Ok(Parsed::Other);
    }
    if n < 6 {
        return Err(too_few(line, Some(','), 7));
    }
    let ts = uint(f[0], "field 1 (Timestamp)")?;
    let dev = uint32(f[2], "field 3 (DiskNumber)")?;
    let op = op_code(
        f[3],
        &[("write", Op::Write), ("read", Op::Read)],
        "field 4 (Type)",
        "Read or Write",
    )?;
    let off = uint(f[4], "field 5 (Offset)")?;
    let len = uint(f[5], "field 6 (Size)")?;
    let measured = match n {
        7 if !f[6].is_empty() => latency(f[6], 0.1, "field 7 (ResponseTime)")?,
        _ => f32::NAN,
    };
    request_measured(filetime_us(ts), op, off, len, dev, measured)
}

/// Write `requests` as MSR Cambridge CSV at `out` (Hostname `ssdlab`, DiskNumber = the
/// stream hint, ResponseTime empty: no measurement, where a 0 would read back as a measured
/// latency of 0 µs). Times are written as 100 ns ticks below the Unix epoch, which the reader
/// divides by 10: whole-µs times read back exactly. Returns the requests written.
pub fn write_msr(
    requests: impl Iterator<Item = crate::error::Result<(crate::request::Request, u64)>>,
    src: &str,
    out: &std::path::Path,
) -> crate::error::Result<u64> {
    use crate::error::SimError;
    use std::io::Write;
    let out_name = out.display().to_string();
    let put =
        |w: &mut std::io::BufWriter<std::fs::File>, r: &crate::request::Request, line: u64| {
            let ticks = r.time_us * 10.0;
            if !(ticks >= 0.0 && ticks < UNIX_EPOCH_FILETIME as f64 && ticks.fract() == 0.0) {
                return Err(SimError::trace(
                    src,
                    line,
                    format!(
                        "time {} µs cannot be written as an MSR timestamp",
                        r.time_us
                    ),
                ));
            }
            super::binary::no_placement_id(r, src, line, "an MSR trace")?;
            let op = match r.op {
                Op::Read => "Read",
                Op::Write => "Write",
                Op::Trim => {
                    return Err(SimError::trace(src, line, "MSR traces cannot hold a trim"));
                }
            };
            writeln!(
                w,
                "{},ssdlab,{},{op},{},{},",
                ticks as u64, r.dev, r.offset_bytes, r.len_bytes
            )
            .map_err(|e| SimError::io(out_name.as_str(), e))
        };
    super::binary::write_atomically(out, b"", requests, put, |_, _| Ok(()))
}

#[cfg(test)]
mod tests {
    use super::super::fields::check;
    use super::*;
    use crate::request::Request;

    #[test]
    fn parses_msr() {
        let unix = Request::new(1_172_164_929_551_466.3, Op::Write, 9056014336, 2048, 0);
        // No ResponseTime, or an empty one: no measured latency.
        let unmeasured = Request::new(0.1, Op::Read, 0, 512, 2);
        check(
            parse,
            &[
                (
                    "128166385295514663,hm,0,Write,9056014336,2048,2833",
                    Request {
                        measured_us: 283.3,
                        ..unix
                    },
                ),
                ("1,h,2,read,0,512", unmeasured),
                ("1,h,2,read,0,512,", unmeasured),
            ],
            &[
                ("1,h,2,Read,0,512,2.5ms", "field 7 (ResponseTime) \"2.5ms\""),
                ("1,h,2,Flush,0,512,1", "Type"),
                ("1,h,2,Read,-5,512,1", "negative"),
            ],
        );
        assert_eq!(
            parse("Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime"),
            Ok(Parsed::Other)
        );
    }
}
